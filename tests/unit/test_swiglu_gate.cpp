// The fused SwiGLU gate (kernels/swiglu.h, kernels/swiglu_*) against ATen's silu(a) * b and its
// autograd: fp64 to round-off, fp32 to its rounding, bf16 within one rounding of each fp64 element;
// for separate operands, the stacked layout, the halves of one tensor, strided and 3-d inputs;
// gradcheck in fp64; the SwiGLU MLP in a model with the projections stacked (the gate's gradient
// written as one buffer the projection's backward reads as it is, with no copy gathering it)
// against the unfused model; and the switch.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <atomic>
#include <functional>

#include "kernels/projections.h"
#include "ember/model/lm.h"
#include "ember/model/mlp.h"
#include "kernels/swiglu.h"
#include "model_gradients.h"
#include "rounding_steps.h"
#include "test_helpers.h"

namespace swiglu_gate {
namespace {

struct Switch : ember::testing::ScopedFusion {  // the fused gate on or off for one scope
  explicit Switch(bool on) : ScopedFusion(ember::kernels::Op::swiglu, on) {}
};

enum class Layout { separate, stacked, halves, strided };

struct Result {
  at::Tensor z, da, db;
};

// z = gate(a, b) and the gradients of sum(z * probe), with a and b laid out as asked from the
// [rows..., 2F] values `ab` (a its first half, b its second).
Result run(const at::Tensor& ab, const at::Tensor& probe, Layout layout, bool fused) {
  Switch s(fused);
  const int64_t F = ab.size(-1) / 2;
  auto leaf = ab.detach().clone().requires_grad_(true);
  at::Tensor a, b, z;
  if (layout == Layout::stacked) {
    z = ember::swiglu::gate_stacked(leaf);
  } else if (layout == Layout::halves) {
    a = leaf.narrow(-1, 0, F), b = leaf.narrow(-1, F, F);
  } else if (layout == Layout::separate) {
    a = leaf.narrow(-1, 0, F).contiguous(), b = leaf.narrow(-1, F, F).contiguous();
  } else {  // rows that are not evenly strided: a [T, B, F] view of [B, T, F]
    a = leaf.narrow(-1, 0, F).transpose(0, 1), b = leaf.narrow(-1, F, F).transpose(0, 1);
  }
  if (!z.defined()) z = ember::swiglu::gate(a, b);
  auto p = layout == Layout::strided ? probe.transpose(0, 1) : probe;
  (z.to(at::kDouble) * p).sum().backward();
  auto g = leaf.grad();
  auto z_out = layout == Layout::strided ? z.transpose(0, 1) : z;
  return {z_out.detach(), g.narrow(-1, 0, F), g.narrow(-1, F, F)};
}

double relative(const at::Tensor& got, const at::Tensor& want) {
  return ember::testing::max_abs_diff(got.to(at::kDouble), want.to(at::kDouble)) /
         std::max(1e-300, want.abs().max().item<double>());
}

// fp64 and fp32 results within `tol` of the largest fp64 value; bf16 ones within one rounding of each
// fp64 element (computed in fp32, stored once).
void expect_close(const at::Tensor& got, const at::Tensor& want, double tol, const std::string& what) {
  const auto check = ember::testing::close_to_reference(got, want, tol);
  EXPECT_TRUE(check.ok) << what << ": " << check.worst;
}

TEST(SwiGLUGate, EqualsAtenInEveryPrecisionAndLayout) {
  torch::manual_seed(3);
  const auto ab64 = 3 * torch::randn({3, 37, 2 * 45}, torch::kDouble);  // wide enough for both signs' tails
  // bf16 values, so that the bf16 result's gradient (the probe in bf16) is the reference's exactly
  const auto probe = torch::randn({3, 37, 45}).to(at::kBFloat16).to(at::kDouble);
  for (const auto dtype : {at::kDouble, at::kFloat, at::kBFloat16}) {
    const auto ab = ab64.to(dtype);
    const auto want = run(ab.to(at::kDouble), probe, Layout::separate, false);  // ATen in fp64 on the same values
    // fp64: round-off; fp32: its rounding; bf16 (expect_close; here only to scale ATen's): 2^-8 with margin.
    const double tol = dtype == at::kDouble ? 1e-13 : dtype == at::kFloat ? 1e-6 : 1.0 / 128;
    for (const auto layout : {Layout::separate, Layout::stacked, Layout::halves, Layout::strided}) {
      const auto got = run(ab, probe, layout, true);
      const std::string what = std::string(c10::toString(dtype)) + " layout " + std::to_string(int(layout));
      EXPECT_EQ(got.z.scalar_type(), dtype) << what;
      EXPECT_EQ(got.da.scalar_type(), dtype) << what;
      expect_close(got.z, want.z, tol, what + ", z");
      expect_close(got.da, want.da, tol, what + ", da");
      expect_close(got.db, want.db, tol, what + ", db");
      const auto aten = run(ab, probe, layout, false);  // the unfused path on the same inputs, for scale
      EXPECT_LE(relative(got.z, aten.z), 2 * tol) << what;
    }
  }
}

TEST(SwiGLUGate, PassesGradcheckInFloat64) {
  torch::manual_seed(5);
  const auto ab = torch::randn({2, 5, 8}, torch::kDouble), probe = torch::randn({2, 5, 4}, torch::kDouble);
  Switch on(true);
  auto loss = [&](const at::Tensor& v) {  // the stacked layout
    return (probe * ember::swiglu::gate_stacked(v).sin()).sum();
  };
  auto leaf = ab.clone().requires_grad_(true);
  const auto grad = torch::autograd::grad({loss(leaf)}, {leaf})[0];
  torch::NoGradGuard no_grad;
  for (int64_t k = 0; k < ab.numel(); ++k) {
    auto up = ab.clone(), down = ab.clone();
    up.view(-1)[k] += 1e-6, down.view(-1)[k] -= 1e-6;
    const double numeric = (loss(up) - loss(down)).item<double>() / 2e-6;
    EXPECT_NEAR(grad.view(-1)[k].item<double>(), numeric, 1e-7 * std::max(1.0, std::abs(numeric))) << "element " << k;
  }
}

TEST(SwiGLUGate, TheHalvesGradientsAreOneBuffer) {
  const auto ab = torch::randn({64, 16}, torch::kDouble);
  const auto a = ab.narrow(-1, 0, 8), b = ab.narrow(-1, 8, 8);
  const auto dz = torch::randn({64, 8}, torch::kDouble);
  auto into = at::empty({64, 16}, torch::kDouble);
  const auto [da, db] = ember::swiglu::gate_backward(a, b, dz, into);
  EXPECT_TRUE(da.is_alias_of(into) && db.is_alias_of(into));
  EXPECT_EQ(db.data_ptr<double>(), into.data_ptr<double>() + 8);
  const auto [da2, db2] = ember::swiglu::gate_backward(a, b, dz);
  EXPECT_TRUE(at::equal(da, da2) && at::equal(db, db2));
  EXPECT_NE(ember::testing::error_message([&] { ember::swiglu::gate_backward(a, b, dz, at::empty({64, 15}, at::kDouble)); })
                .find("does not hold two halves"),
            std::string::npos);
}

// A model's loss and every parameter's gradient with the fused gate (and the projections stacked,
// so the gate writes the stacked projection's gradient as one buffer) against ATen's ops unstacked.
TEST(SwiGLUGate, TheMlpInAModelEqualsTheUnfusedOne) {
  auto grads = [&](bool fused) {
    Switch gate(fused);
    const ember::testing::ScopedFusion stacked(ember::kernels::Op::projections, fused);
    return ember::testing::small_model_loss_and_gradients();
  };
  const auto fused = grads(true), plain = grads(false);
  ASSERT_EQ(fused.size(), plain.size());
  for (size_t i = 0; i < fused.size(); ++i)
    EXPECT_LE(relative(fused[i], plain[i]), 1e-12) << (i == 0 ? "loss" : "gradient " + std::to_string(i - 1));
}

std::atomic<int> cats{0};

// The aten::cat ops of f(), counted on every thread (backward's included).
int cats_of(const std::function<void()>& f) {
  cats = 0;
  const auto handle = at::addGlobalCallback(
      at::RecordFunctionCallback([](const at::RecordFunction& fn) -> std::unique_ptr<at::ObserverContext> {
        if (std::string(fn.name()) == "aten::cat") ++cats;
        return nullptr;
      }));
  f();
  at::removeCallback(handle);
  return cats.load();
}

// The stacked projection and the fused gate meet in one layout (kernels/projections.h): the gate
// writes its gradient as one buffer and the projection reads it as it is. The only concatenations
// of the MLP's forward and backward are then the stacked weight's, made once in each; a change that
// hands the gate its operands apart (or copies them) brings back the copy gathering the gradients,
// and the count here, as it does with the gate on ATen's ops.
TEST(SwiGLUGate, TheStackedProjectionReadsTheGatesGradientAsItIs) {
  const ember::testing::ScopedFusion stacked(ember::kernels::Op::projections, true);
  torch::manual_seed(6);
  ember::SwiGLU mlp(16, 24, 0.02, 0.02);
  const auto x = torch::randn({4, 32, 16});  // 128 rows: stacked
  auto step = [&] {
    auto xv = x.clone().requires_grad_(true);
    mlp.forward(xv).sum().backward();
  };
  const int fused = [&] { Switch on(true); return cats_of(step); }();
  const int aten = [&] { Switch off(false); return cats_of(step); }();
  EXPECT_EQ(fused, 2) << "the stacked weight in forward and in backward, and nothing else";
  EXPECT_EQ(aten, 3) << "and the copy gathering the gate's and the up's gradients";
}

TEST(SwiGLUGate, UnsupportedInputsTakeAtensOps) {
  Switch on(true);
  const auto a = torch::randn({4, 6}).to(at::kHalf), b = torch::randn({4, 6}).to(at::kHalf);
  EXPECT_FALSE(ember::swiglu::fused_supported(a, b));
  EXPECT_TRUE(at::equal(ember::swiglu::gate(a, b), at::silu(a) * b));
  const auto ab = at::cat({a, b}, -1);
  EXPECT_TRUE(at::equal(ember::swiglu::gate_stacked(ab), at::silu(a) * b));
  EXPECT_NE(ember::testing::error_message([&] { ember::swiglu::gate_stacked(torch::randn({4, 5})); }).find("[..., 2F]"),
            std::string::npos);
  EXPECT_FALSE(ember::swiglu::fused_supported(torch::randn({4, 6}), torch::randn({4, 6}, torch::kDouble)));
}

}  // namespace
}  // namespace swiglu_gate
