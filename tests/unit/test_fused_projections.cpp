// Projections that read one input as one GEMM (kernels/projections.h) against one at::linear per
// weight: outputs and the gradients of the input and every weight, in float64 and float32 to
// round-off and under bf16 autocast within its rounding; gradcheck in float64; and every attention
// kind and the SwiGLU MLP in a model, forward, loss gradients and decoding, fused against unfused.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "ember/model/autocast.h"
#include "kernels/projections.h"
#include "ember/model/lm.h"
#include "ember/model/mixers/attention.h"
#include "test_helpers.h"

namespace fused_projections {
namespace {

// Sets the switch for one scope.
struct FusedProjections : ember::testing::ScopedFusion {
  explicit FusedProjections(bool on) : ScopedFusion(ember::kernels::Op::projections, on) {}
};

struct Run {
  std::vector<at::Tensor> outputs, grads;  // grads: x, then each weight
};

Run run(bool fused, const at::Tensor& x0, const std::vector<at::Tensor>& w0, bool bf16) {
  FusedProjections scope(fused);
  auto x = x0.detach().clone().requires_grad_(true);
  std::vector<at::Tensor> w;
  for (const auto& t : w0) w.push_back(t.detach().clone().requires_grad_(true));
  std::vector<at::Tensor> out;
  {
    ember::AutocastScope amp(at::kCPU, bf16);
    out = ember::projections::of(x, w);
  }
  at::Tensor total = at::zeros({}, x0.options());
  for (size_t i = 0; i < out.size(); ++i)  // a different weighting per part, so a swapped part shows
    total = total + (out[i].to(x0.scalar_type()) * static_cast<double>(i + 1)).sin().sum();
  total.backward();
  Run r{out, {x.grad()}};
  for (const auto& t : w) r.grads.push_back(t.grad());
  return r;
}

void expect_close(const Run& a, const Run& b, double tol, const std::string& what) {
  ASSERT_EQ(a.outputs.size(), b.outputs.size());
  for (size_t i = 0; i < a.outputs.size(); ++i) {
    ASSERT_EQ(a.outputs[i].sizes(), b.outputs[i].sizes()) << what;
    EXPECT_EQ(a.outputs[i].scalar_type(), b.outputs[i].scalar_type()) << what;
    const double scale = b.outputs[i].abs().max().item<double>();
    EXPECT_LE(ember::testing::max_abs_diff(a.outputs[i].to(at::kDouble), b.outputs[i].to(at::kDouble)), tol * scale)
        << what << " output " << i;
  }
  for (size_t i = 0; i < a.grads.size(); ++i) {
    const double scale = b.grads[i].abs().max().item<double>();
    EXPECT_LE(ember::testing::max_abs_diff(a.grads[i], b.grads[i]), tol * scale) << what << " gradient " << i;
  }
}

}  // namespace

TEST(FusedProjections, EqualOneLinearPerWeightInEveryPrecision) {
  torch::manual_seed(3);
  {  // fewer rows than that: one linear per weight, bit for bit
    auto x = torch::randn({2, 5, 16}, torch::kDouble);
    std::vector<at::Tensor> w{torch::randn({16, 16}, torch::kDouble), torch::randn({8, 16}, torch::kDouble)};
    const auto fused = run(true, x, w, false), separate = run(false, x, w, false);
    for (size_t i = 0; i < 2; ++i) EXPECT_TRUE(torch::equal(fused.outputs[i], separate.outputs[i]));
  }
  for (const auto& [dtype, bf16, tol] : std::vector<std::tuple<at::ScalarType, bool, double>>{
           {at::kDouble, false, 1e-13}, {at::kFloat, false, 1e-5}, {at::kFloat, true, 2e-2}}) {
    const auto opts = at::TensorOptions().dtype(dtype);
    auto x = torch::randn({4, 20, 16}, opts);  // 80 rows: stacked (64 or more)
    std::vector<at::Tensor> w{torch::randn({16, 16}, opts), torch::randn({8, 16}, opts), torch::randn({8, 16}, opts),
                              torch::randn({4, 16}, opts)};  // q, k, v (GQA) and a headwise gate
    const auto fused = run(true, x, w, bf16), separate = run(false, x, w, bf16);
    expect_close(fused, separate, tol, std::string(c10::toString(dtype)) + (bf16 ? " bf16 autocast" : ""));
    if (bf16) EXPECT_EQ(fused.outputs[0].scalar_type(), at::kBFloat16);
  }
}

// Autograd's gradients of the fused path against central differences at every element (gradcheck).
// The built-in default: stacked for CUDA inputs only (no gain measured on a CPU: bench/RESULTS.md).
TEST(FusedProjections, AreOnForCudaInputsByDefault) {
  using ember::kernels::Op;
  using ember::kernels::Path;
  {
    const ember::kernels::ScopedPath automatic(Op::projections, Path::automatic);
    EXPECT_TRUE(ember::kernels::use_fused(Op::projections, at::Device(at::kCUDA, 0)));
    EXPECT_FALSE(ember::kernels::use_fused(Op::projections, at::Device(at::kCPU)));
  }
  const ember::kernels::ScopedPath aten(Op::projections, Path::aten);
  EXPECT_FALSE(ember::kernels::use_fused(Op::projections, at::Device(at::kCUDA, 0)));
}

TEST(FusedProjections, PassGradcheckInFloat64) {
  torch::manual_seed(4);
  std::vector<at::Tensor> in{torch::randn({2, 32, 4}, torch::kDouble), torch::randn({3, 4}, torch::kDouble),
                             torch::randn({2, 4}, torch::kDouble)};  // 64 rows: stacked
  const auto probe0 = torch::randn({2, 32, 3}, torch::kDouble), probe1 = torch::randn({2, 32, 2}, torch::kDouble);
  FusedProjections on(true);
  auto loss = [&](const std::vector<at::Tensor>& v) {  // a scalar of both parts, non-linear in each
    auto y = ember::projections::of(v[0], {v[1], v[2]});
    return (probe0 * y[0].sin()).sum() + (probe1 * y[1] * y[1]).sum();
  };
  std::vector<at::Tensor> leaves;
  for (const auto& t : in) leaves.push_back(t.clone().requires_grad_(true));
  const auto grads = torch::autograd::grad({loss(leaves)}, leaves);
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < in.size(); ++i)
    for (int64_t k = 0; k < in[i].numel(); ++k) {
      auto up = in, down = in;
      up[i] = in[i].clone(), down[i] = in[i].clone();
      up[i].view(-1)[k] += 1e-6, down[i].view(-1)[k] -= 1e-6;
      const double numeric = (loss(up) - loss(down)).item<double>() / 2e-6;
      EXPECT_NEAR(grads[i].view(-1)[k].item<double>(), numeric, 1e-7 * std::max(1.0, std::abs(numeric)))
          << "input " << i << " element " << k;
    }
}

namespace {

ember::ModelConfig model(const std::string& mixer, int64_t kv_heads) {
  ember::ModelConfig c;
  c.vocab_size = 40, c.d_model = 32, c.n_layers = 2, c.n_heads = 4, c.n_kv_heads = kv_heads, c.max_seq_len = 32;
  c.mlp.d_ff = 48;
  c.mixer.kind = mixer;
  if (mixer == "gated_attention") c.mixer.get<ember::GatedAttentionConfig>().gate = ember::Gate::elementwise;
  return c;
}

}  // namespace

TEST(FusedProjections, EveryAttentionKindAndTheMlpAreUnchangedInAModel) {
  for (const std::string mixer : {"attention", "gated_attention", "hope_attention"}) {
    for (int64_t kv : {0, 2}) {
      torch::manual_seed(5);
      ember::LanguageModel m(model(mixer, kv));
      m.to(torch::kDouble);
      // 4 x 20 = 80 rows: the forward is stacked; decoding's 28 and 20 rows take one linear per weight
      auto ids = torch::randint(0, 40, {4, 20}, torch::kLong), targets = torch::randint(0, 40, {4, 20}, torch::kLong);
      std::map<std::string, at::Tensor> grads[2];
      at::Tensor logits[2], decoded[2];
      for (int fused : {0, 1}) {
        FusedProjections scope(fused == 1);
        m.zero_grad();
        m.loss(ids, targets).backward();
        for (const auto& p : m.named_parameters()) grads[fused][p.key()] = p.value().grad().clone();
        torch::NoGradGuard no_grad;
        logits[fused] = m.forward(ids);
        ember::DecodeState state;
        decoded[fused] = at::cat({m.decode(ids.narrow(1, 0, 7), state), m.decode(ids.narrow(1, 7, 13), state)}, 1);
      }
      const std::string what = mixer + " kv " + std::to_string(kv);
      EXPECT_LT(ember::testing::max_abs_diff(logits[1], logits[0]), 1e-12) << what;
      EXPECT_LT(ember::testing::max_abs_diff(decoded[1], logits[0]), 1e-12) << what << ": decoding";
      for (const auto& [name, g] : grads[0]) EXPECT_LT(ember::testing::max_abs_diff(grads[1][name], g), 1e-12) << what << " " << name;
    }
  }
}

}  // namespace fused_projections
