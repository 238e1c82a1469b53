// Hope-attention's in-context CMS level under the condition that turned training NaN on real text
// at step 2 (docs/mixers.md, "A bounded inner step"): the inner objective <delta_t, MLP(u_t)> is
// linear in the level's output and delta comes from the first, static pass, so it has no minimum;
// its gradient grows with the weights (the output is cubic in them) and the summed chunk steps
// grow the weights faster than geometrically. Measured in the tiny model's first forward: the
// fastest level's W_down 2.2 -> 647 within 112 tokens, then 7e21 and NaN. Per-token inner gradient
// clipping bounds every step, so ||theta_T - theta_0||_F <= lr * clip * T. Checked against a
// token-by-token float64 oracle (autograd per token, the clip applied to the three gradients'
// joint norm) in float64, float32 and bfloat16.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "ember/model/autocast.h"
#include "ember/model/mlps/cms/fast_swiglu.h"
#include "ember/model/mixers/hope_attention.h"
#include "test_helpers.h"

// Named, so its helpers do not meet test_cms_updates.cpp's in a unity group (docs/building.md).
namespace cms_stability {
namespace {

using ember::testing::kF64;

// The tiny model's fastest level: d 128, a level width 96 (d_ff 384 over 4 levels), init std 0.02,
// T 128, C 16, inner lr 0.01; inputs RMS-normed (row norm sqrt(d)); teach rows of norm ~4 sharing
// one direction (the next-token gradient at init is dominated by the head's mean row).
constexpr int64_t kD = 128, kF = 96, kT = 128, kChunk = 16;
constexpr double kLr = 0.01;

std::shared_ptr<ember::SwiGLU> level() {
  torch::manual_seed(21);
  auto mlp = std::make_shared<ember::SwiGLU>(kD, kF, 0.02, 0.02);
  mlp->to(torch::kFloat64);
  return mlp;
}

at::Tensor normed_inputs() {
  torch::manual_seed(22);
  auto u = torch::randn({1, kT, kD}, kF64) + 0.5 * torch::randn({1, 1, kD}, kF64);
  return u / u.norm(2, -1, true) * std::sqrt(static_cast<double>(kD));
}

at::Tensor aligned_teach() {
  torch::manual_seed(23);
  auto t = torch::randn({1, 1, kD}, kF64) + 0.3 * torch::randn({1, kT, kD}, kF64);
  return t / t.norm(2, -1, true) * 4.0;
}

ember::LevelUpdate rule(double clip) { return {kChunk, kLr, false, ember::TeachSource::two_pass, clip}; }

at::Tensor forward(const ember::SwiGLU& mlp, const at::Tensor& u, const at::Tensor& teach, double clip) {
  torch::NoGradGuard no_grad;
  return ember::fast_swiglu_forward(mlp, u, u, {teach, {}}, rule(clip));
}

// Token by token with autograd: each token's three gradients of <delta_t, MLP(u_t)>, scaled by
// min(1, clip / ||(g_gate, g_up, g_down)||_F), summed over the chunk; the step after every C-th
// token. Returns the outputs and the final weights' distance from theta_0.
std::pair<at::Tensor, double> oracle(const ember::SwiGLU& mlp, const at::Tensor& u, const at::Tensor& teach,
                                     double clip) {
  at::AutoGradMode grad_mode(true);
  std::vector<at::Tensor> w = {mlp.w_gate().detach().clone(), mlp.w_up().detach().clone(),
                               mlp.w_down().detach().clone()};
  const auto w0 = std::vector<at::Tensor>{w[0].clone(), w[1].clone(), w[2].clone()};
  std::vector<at::Tensor> sum = {at::zeros_like(w[0]), at::zeros_like(w[1]), at::zeros_like(w[2])};
  auto mlp_of = [](const std::vector<at::Tensor>& p, const at::Tensor& x) {
    return (at::silu(x.matmul(p[0].t())) * x.matmul(p[1].t())).matmul(p[2].t());
  };
  std::vector<at::Tensor> rows;
  for (int64_t t = 0; t < u.size(1); ++t) {
    auto ut = u[0][t].unsqueeze(0);
    rows.push_back(mlp_of(w, ut).detach());
    std::vector<at::Tensor> leaves;
    for (const auto& x : w) leaves.push_back(x.clone().requires_grad_(true));
    auto grads = torch::autograd::grad({(teach[0][t].unsqueeze(0) * mlp_of(leaves, ut)).sum()}, leaves);
    double norm = 0;
    for (const auto& g : grads) norm += g.pow(2).sum().item<double>();
    const double scale = clip > 0 ? std::min(1.0, clip / std::sqrt(norm)) : 1.0;
    for (size_t i = 0; i < 3; ++i) sum[i] += scale * grads[i];
    if ((t + 1) % kChunk == 0)
      for (size_t i = 0; i < 3; ++i) w[i] -= kLr * sum[i], sum[i].zero_();
  }
  double moved = 0;
  for (size_t i = 0; i < 3; ++i) moved += (w[i] - w0[i]).pow(2).sum().item<double>();
  return {at::cat(rows, 0).unsqueeze(0), std::sqrt(moved)};
}

double max_abs(const at::Tensor& x) { return x.abs().max().item<double>(); }

}  // namespace

TEST(CmsStability, WithoutClippingTheMeasuredConditionBlowsUp) {
  auto mlp = level();
  const auto u = normed_inputs(), teach = aligned_teach();
  const auto [y64, moved] = oracle(*mlp, u, teach, 0.0);
  mlp->to(torch::kFloat);
  auto y32 = forward(*mlp, u.to(torch::kFloat), teach.to(torch::kFloat), 0.0);
  // The reads of the first chunk are O(0.03); the last chunk's are beyond any activation's range.
  EXPECT_LT(max_abs(y64.narrow(1, 0, kChunk)), 0.1);
  EXPECT_TRUE(!y32.isfinite().all().item<bool>() || max_abs(y32) > 1e6) << max_abs(y32);
  EXPECT_TRUE(!std::isfinite(moved) || moved > 1e3) << moved;  // the defect the clip removes
}

TEST(CmsStability, ClippedStepsEqualTheOracleAndStayWithinTheirBound) {
  const auto u = normed_inputs(), teach = aligned_teach();
  for (double clip : {0.5, 1.0}) {
    auto mlp = level();
    const auto [expected, moved] = oracle(*mlp, u, teach, clip);
    EXPECT_LE(moved, kLr * clip * static_cast<double>(kT) + 1e-12) << "clip " << clip;
    EXPECT_LT(max_abs(expected), 10.0) << "clip " << clip;
    const auto got64 = forward(*mlp, u, teach, clip);
    EXPECT_LT(max_abs(got64 - expected), 1e-12 * std::max(1.0, max_abs(expected))) << "clip " << clip;
    // The clip binds here (else the test would not test it): an unclipped first step differs.
    EXPECT_GT(max_abs(forward(*mlp, u, teach, 1e9) - expected), 1e-3);
    // float32, and float32 weights under bf16 autocast (the trainer's precision: bf16 matmuls).
    for (auto [bf16, tol] : {std::pair{false, 1e-4}, std::pair{true, 5e-2}}) {
      auto low = level();
      low->to(torch::kFloat);
      ember::AutocastScope autocast(torch::kCPU, bf16);
      const auto got = forward(*low, u.to(torch::kFloat), teach.to(torch::kFloat), clip).to(kF64);
      ASSERT_TRUE(got.isfinite().all().item<bool>()) << "clip " << clip << ", bf16 " << bf16;
      EXPECT_LT(max_abs(got - expected), tol * std::max(1.0, max_abs(expected))) << "clip " << clip << ", bf16 " << bf16;
    }
  }
}

TEST(CmsStability, ClippedUpdatesHaveFiniteOuterGradientsAtAZeroTeachSignal) {
  auto mlp = level();
  auto u = normed_inputs().narrow(1, 0, 48).contiguous().requires_grad_(true);
  auto teach = at::zeros({1, 48, kD}, kF64);  // ||delta|| = 0: the clip's derivative must stay finite
  teach.narrow(1, 20, 10).copy_(aligned_teach().narrow(1, 0, 10));
  const ember::LevelUpdate meta{kChunk, kLr, true, ember::TeachSource::two_pass, 1.0};
  auto y = ember::fast_swiglu_forward(*mlp, u, u, {teach, {}}, meta);
  auto grads = torch::autograd::grad({y.pow(2).sum()}, {u, mlp->w_gate(), mlp->w_down()});
  for (const auto& g : grads) EXPECT_TRUE(g.isfinite().all().item<bool>());
}

TEST(CmsStability, TheClipIsOnByDefault) {
  EXPECT_EQ(ember::HopeAttentionConfig{}.inner_grad_clip, 1.0);
  ember::HopeAttentionConfig cfg;
  cfg.update = ember::CmsUpdate::chunked;
  for (const auto& r : cfg.level_updates()) EXPECT_EQ(r.grad_clip, 1.0);
}

}  // namespace cms_stability
