// The fused RMSNorm with its residual add (model/norm.h, kernels/rms_norm_*) against the formula
// written out in fp64 and differentiated by autograd: y and h, and the gradients of x, m and the
// gain, with the gradient along the stream present or not, for every storage combination (fp64, fp32,
// bf16 block output, bf16 normed output) at a width that is not a multiple of the vector lanes and
// over enough rows that every thread holds a partial gain gradient; central differences in fp64; a
// whole model fused against ATen's ops; the switch; and inputs the kernels do not take. bf16 results
// are held element by element to one rounding of the fp64 value (tests/unit/rounding_steps.h).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "ember/model/norm.h"
#include "kernels/rms_norm.h"
#include "model_gradients.h"
#include "rounding_steps.h"
#include "test_helpers.h"

namespace rms_norm_test {
namespace {

struct Switch : ember::testing::ScopedFusion {  // the fused norm on or off for one scope
  explicit Switch(bool on) : ScopedFusion(ember::kernels::Op::norm, on) {}
};

struct Result {
  at::Tensor h, y, dx, dm, dg;
};

// h = x + m and y = RMSNorm(h) g (through add_forward, or the formula in fp64 when `reference`),
// then the gradients of sum(y * py) (+ sum(h * ph) when the stream's gradient is asked for).
Result run(const at::Tensor& x0, const at::Tensor& m0, const at::Tensor& g0, const at::Tensor& py,
           const at::Tensor& ph, std::optional<at::ScalarType> y_type, bool reference) {
  const double eps = 1e-5;
  auto x = x0.detach().clone().requires_grad_(true), m = m0.detach().clone().requires_grad_(true);
  ember::RMSNorm norm(x0.size(-1), eps);
  norm.to(g0.scalar_type());
  auto g = norm.named_parameters()["weight"];
  {
    torch::NoGradGuard no_grad;
    g.copy_(g0);
  }
  at::Tensor h, y;
  if (reference) {
    h = x.to(at::kDouble) + m.to(at::kDouble);
    y = h * at::rsqrt(h.pow(2).mean(-1, true) + eps) * g.to(at::kDouble);
  } else {
    std::tie(h, y) = norm.add_forward(x, m, y_type);
  }
  auto loss = (y.to(at::kDouble) * py).sum();
  if (ph.defined()) loss = loss + (h.to(at::kDouble) * ph).sum();
  loss.backward();
  return {h.detach(), y.detach(), x.grad(), m.grad(), g.grad()};
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

struct Case {
  at::ScalarType stream, m, y;
  double tol;
};

TEST(FusedRmsNorm, AddAndNormEqualTheFormulaInEveryStorageCombination) {
  torch::manual_seed(3);
  const int64_t D = 37;  // not a multiple of the 16 lanes
  const auto x64 = 3 * torch::randn({3, 700, D}, torch::kDouble), m64 = torch::randn({3, 700, D}, torch::kDouble);
  const auto g64 = torch::rand({D}, torch::kDouble) + 0.5;
  // The probes are bf16 values, so that a bf16 output's gradient (the probe in bf16) is the
  // reference's exactly.
  const auto py = torch::randn({3, 700, D}).to(at::kBFloat16).to(at::kDouble);
  const auto ph = torch::randn({3, 700, D}).to(at::kBFloat16).to(at::kDouble);
  // In the stream's type, relative to the largest value: fp64 round-off; fp32 its rounding. bf16
  // results: expect_close.
  const std::vector<Case> cases{{at::kDouble, at::kDouble, at::kDouble, 1e-12},
                                {at::kFloat, at::kFloat, at::kFloat, 1e-5},
                                {at::kFloat, at::kBFloat16, at::kFloat, 1e-5},
                                {at::kFloat, at::kFloat, at::kBFloat16, 1e-5},
                                {at::kFloat, at::kBFloat16, at::kBFloat16, 1e-5}};
  Switch on(true);
  for (const auto& c : cases) {
    const auto x = x64.to(c.stream), m = m64.to(c.m), g = g64.to(c.stream);
    ASSERT_TRUE(ember::rms_norm::fused_supported(x, m, g, c.y));
    for (const bool along_stream : {true, false}) {
      const auto ph_used = along_stream ? ph : at::Tensor();
      // The reference reads the same (rounded) inputs; bf16 outputs are compared to the fp64 values.
      const auto want = run(x.to(at::kDouble), m.to(at::kDouble), g.to(at::kDouble), py, ph_used, {}, true);
      const auto got = run(x, m, g, py, ph_used, c.y, false);
      const std::string what = std::string(c10::toString(c.stream)) + "/" + c10::toString(c.m) + "/" +
                               c10::toString(c.y) + (along_stream ? " with dh" : " without dh");
      EXPECT_EQ(got.h.scalar_type(), c.stream) << what;
      EXPECT_EQ(got.y.scalar_type(), c.y) << what;
      EXPECT_EQ(got.dx.scalar_type(), c.stream) << what;
      EXPECT_EQ(got.dm.scalar_type(), c.m) << what;
      EXPECT_LE(relative(got.h, want.h), c.stream == at::kDouble ? 1e-15 : 1e-7) << what;
      expect_close(got.y, want.y, c.tol, what + ", y");
      expect_close(got.dx, want.dx, c.tol, what + ", dx");
      expect_close(got.dm, want.dm, c.tol, what + ", dm");
      expect_close(got.dg, want.dg, c.tol, what + ", dg");
    }
  }
}

TEST(FusedRmsNorm, PassesGradcheckInFloat64) {
  torch::manual_seed(5);
  const int64_t D = 6;
  const auto x0 = torch::randn({2, 3, D}, torch::kDouble), m0 = torch::randn({2, 3, D}, torch::kDouble);
  const auto py = torch::randn({2, 3, D}, torch::kDouble), ph = torch::randn({2, 3, D}, torch::kDouble);
  Switch on(true);
  ember::RMSNorm norm(D, 1e-5);
  norm.to(at::kDouble);
  auto g = norm.named_parameters()["weight"];
  {
    torch::NoGradGuard no_grad;
    g.uniform_(0.5, 1.5);
  }
  auto loss = [&](const at::Tensor& x, const at::Tensor& m) {
    auto [h, y] = norm.add_forward(x, m);
    return (py * y.sin()).sum() + (ph * h.cos()).sum() + (py * norm.forward(h)).sum();
  };
  auto x = x0.clone().requires_grad_(true), m = m0.clone().requires_grad_(true);
  const auto grads = torch::autograd::grad({loss(x, m)}, {x, m, g});
  torch::NoGradGuard no_grad;
  auto numeric = [&](at::Tensor& v, int64_t k) {
    const double was = v.view(-1)[k].item<double>();
    v.view(-1)[k] = was + 1e-6;
    const double up = loss(x, m).item<double>();
    v.view(-1)[k] = was - 1e-6;
    const double down = loss(x, m).item<double>();
    v.view(-1)[k] = was;
    return (up - down) / 2e-6;
  };
  std::vector<at::Tensor*> leaves{&x, &m, &g};
  for (size_t i = 0; i < leaves.size(); ++i)
    for (int64_t k = 0; k < leaves[i]->numel(); ++k) {
      const double want = numeric(*leaves[i], k);
      EXPECT_NEAR(grads[i].view(-1)[k].item<double>(), want, 1e-7 * std::max(1.0, std::abs(want)))
          << "input " << i << " element " << k;
    }
}

// A model's loss and every parameter's gradient with the fused norms (plain and with the add)
// against ATen's add and rms_norm, in fp64.
TEST(FusedRmsNorm, AModelEqualsTheUnfusedOne) {
  auto grads = [&](bool fused) {
    Switch s(fused);
    return ember::testing::small_model_loss_and_gradients();
  };
  const auto fused = grads(true), plain = grads(false);
  ASSERT_EQ(fused.size(), plain.size());
  for (size_t i = 0; i < fused.size(); ++i)
    EXPECT_LE(relative(fused[i], plain[i]), 1e-12) << (i == 0 ? "loss" : "gradient " + std::to_string(i - 1));
}

TEST(FusedRmsNorm, UnsupportedInputsTakeAtensOpsAndTheKernelsNameWhatTheyRefuse) {
  Switch on(true);
  ember::RMSNorm norm(6, 1e-5);
  const auto g = norm.named_parameters()["weight"];
  const auto x = torch::randn({4, 6}), half = x.to(at::kHalf);
  EXPECT_TRUE(ember::rms_norm::fused_supported(x, {}, g, at::kFloat));
  EXPECT_FALSE(ember::rms_norm::fused_supported(half, {}, g, at::kHalf));                    // an fp16 stream
  EXPECT_FALSE(ember::rms_norm::fused_supported(x, torch::randn({4, 5}), g, at::kFloat));     // m of another shape
  EXPECT_FALSE(ember::rms_norm::fused_supported(x, {}, g, at::kHalf));                       // an fp16 output
  EXPECT_FALSE(ember::rms_norm::fused_supported(x.to(at::kDouble), {}, g.to(at::kDouble), at::kBFloat16));
  const auto [h, y] = norm.add_forward(x, half.to(at::kFloat), at::kHalf);  // fp16 output: ATen, then a cast
  EXPECT_EQ(y.scalar_type(), at::kHalf);
  EXPECT_TRUE(at::allclose(y.to(at::kFloat), at::rms_norm(x + half.to(at::kFloat), {6}, g, 1e-5), 1e-2, 1e-2));
  const auto message = ember::testing::error_message([&] { ember::rms_norm::forward(half, {}, g, 1e-5, at::kHalf); });
  EXPECT_NE(message.find("RMSNorm: the fused pass needs"), std::string::npos) << message;
  EXPECT_NE(message.find("Half 4x6"), std::string::npos) << message;
}

}  // namespace
}  // namespace rms_norm_test
