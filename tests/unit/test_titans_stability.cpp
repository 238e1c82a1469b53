// The Titans memory under the condition that turned training NaN on real text (docs/mixers.md,
// "Titans: a bounded inner step"): keys of a chunk nearly aligned (repetitive bytes), momentum
// eta = 0.95, theta near theta_max. The 16 gradients a chunk sums at one point, amplified by
// 1 / (1 - eta), overshoot the inner loss's curvature; the weights grow each chunk (the coupled
// W1 / W2 curvature grows with them) and overflow fp32 within 132 tokens. Per-token inner gradient
// clipping bounds every step. Checked against the token-by-token float64 oracle with the same clip.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "central_differences.h"
#include "ember/model/autocast.h"
#include "ember/model/mixers/titans/titans.h"
#include "test_helpers.h"

namespace {

using ember::MemoryInputs;
using ember::MemoryState;
using ember::Retrieval;
using ember::testing::kF64;

// The measured condition (layer 3 of the tiny Titans model at step 94): d_h 32, m 128, T 132,
// C 16, theta 0.09, eta 0.95, alpha 0.001; keys and values one direction plus 10% noise.
constexpr int64_t kT = 132, kDh = 32, kM = 128, kChunk = 16;

at::Tensor aligned_rows(int64_t T, double scale) {
  auto rows = torch::randn({1, 1, 1, kDh}, kF64) + 0.1 * torch::randn({1, 1, T, kDh}, kF64);
  return rows * scale;
}

MemoryInputs diverging_inputs() {
  torch::manual_seed(11);
  auto unit = [](const at::Tensor& x) { return x / x.norm(2, -1, true); };
  auto k = unit(aligned_rows(kT, 1.0)), q = unit(aligned_rows(kT, 1.0));
  auto gate = [](double value) { return torch::full({1, 1, kT}, value, kF64); };
  return {q, k, aligned_rows(kT, 3.0), gate(0.09), gate(0.95), gate(0.001)};
}

MemoryState initial_state() {
  torch::manual_seed(12);
  auto w1 = torch::randn({1, 1, kDh, kM}, kF64) * 0.1, w2 = torch::randn({1, 1, kM, kDh}, kF64) * 0.1;
  return {w1, w2, torch::zeros_like(w1), torch::zeros_like(w2)};
}

MemoryInputs cast(const MemoryInputs& in, at::ScalarType t) {
  auto c = [t](const at::Tensor& x) { return x.to(t); };
  return {c(in.q), c(in.k), c(in.v), c(in.theta), c(in.eta), c(in.alpha)};
}

MemoryState cast(const MemoryState& s, at::ScalarType t) { return {s.w1.to(t), s.w2.to(t), s.s1.to(t), s.s2.to(t)}; }

double max_abs(const at::Tensor& x) { return x.abs().max().item<double>(); }

}  // namespace

TEST(TitansStability, WithoutClippingTheMeasuredConditionOverflowsFloat32) {
  auto st = cast(initial_state(), torch::kFloat);
  auto y = ember::memory_scan(st, cast(diverging_inputs(), torch::kFloat), {kChunk, Retrieval::after});
  EXPECT_FALSE(y.isfinite().all().item<bool>());  // the defect the clip removes
  auto st64 = initial_state();
  ember::memory_scan_reference(st64, diverging_inputs(), {kChunk, Retrieval::after});
  EXPECT_GT(max_abs(st64.w1), 1e30);  // float64 diverges too: the algorithm, not the precision
}

TEST(TitansStability, ClippedChunkParallelEqualsTheClippedOracleInFloat64) {
  // Well-conditioned random inputs with a clip small enough to bind on most tokens, every retrieval.
  for (Retrieval r : {Retrieval::after, Retrieval::before, Retrieval::chunk})
    for (double clip : {0.05, 1.0}) {
      torch::manual_seed(13);
      auto in = diverging_inputs();
      in.v = torch::randn_like(in.v);
      auto fast = initial_state(), slow = fast;
      auto y = ember::memory_scan(fast, in, {8, r, clip});
      auto y_ref = ember::memory_scan_reference(slow, in, {8, r, clip});
      EXPECT_LT(ember::testing::max_abs_diff(y, y_ref), 1e-12) << ember::enum_name(r) << " clip " << clip;
      EXPECT_LT(ember::testing::max_abs_diff(fast.w1, slow.w1), 1e-12) << ember::enum_name(r) << " clip " << clip;
      EXPECT_LT(ember::testing::max_abs_diff(fast.s2, slow.s2), 1e-12) << ember::enum_name(r) << " clip " << clip;
    }
}

TEST(TitansStability, TheClipBindsAndBoundsEachTokensStep) {
  torch::manual_seed(14);
  auto k = torch::randn({2, 3, kDh}, kF64), v = 50 * torch::randn({2, 3, kDh}, kF64);
  auto st = initial_state();
  auto w1 = st.w1.expand({2, 3, -1, -1}), w2 = st.w2.expand({2, 3, -1, -1});
  auto [u1, u2] = ember::memory_gradient(w1, w2, k, v);
  auto [c1, c2] = ember::clip_gradient(u1, u2, 0.5);
  auto norm = (c1.pow(2).sum({-2, -1}) + c2.pow(2).sum({-2, -1})).sqrt();
  auto raw = (u1.pow(2).sum({-2, -1}) + u2.pow(2).sum({-2, -1})).sqrt();
  EXPECT_TRUE((raw > 0.5).all().item<bool>());  // the inputs make it bind
  EXPECT_LT(max_abs(norm - 0.5), 1e-12);        // to exactly the clip
  EXPECT_LT(ember::testing::max_abs_diff(c1 / u1, (0.5 / raw).unsqueeze(-1).unsqueeze(-1).expand_as(u1)), 1e-12);
  auto [s1, s2] = ember::clip_gradient(u1 * 1e-3, u2 * 1e-3, 0.5);  // below the clip: unchanged
  EXPECT_TRUE(torch::equal(s1, u1 * 1e-3));
}

TEST(TitansStability, ClippedScanStaysFiniteAndNearFloat64InFloat32AndFromBfloat16Inputs) {
  auto st64 = initial_state();
  auto y64 = ember::memory_scan_reference(st64, diverging_inputs(), {kChunk, Retrieval::after, 1.0});
  ASSERT_TRUE(y64.isfinite().all().item<bool>());
  EXPECT_LT(max_abs(st64.w1), 100.0);  // bounded: at most T theta clip / (1 - eta) per weight
  auto st32 = cast(initial_state(), torch::kFloat);
  auto y32 = ember::memory_scan(st32, cast(diverging_inputs(), torch::kFloat), {kChunk, Retrieval::after, 1.0});
  ASSERT_TRUE(y32.isfinite().all().item<bool>());
  EXPECT_LT(max_abs(y32.to(torch::kDouble) - y64) / max_abs(y64), 1e-3);
  // bf16 autocast hands the scan bf16 inputs, which it widens to fp32: the oracle on the same
  // rounded inputs.
  const auto rounded = cast(cast(diverging_inputs(), torch::kBFloat16), torch::kDouble);
  auto st_ref = initial_state();
  auto y_ref = ember::memory_scan_reference(st_ref, rounded, {kChunk, Retrieval::after, 1.0});
  auto st_bf = cast(initial_state(), torch::kFloat);
  auto y_bf = ember::memory_scan(st_bf, cast(rounded, torch::kFloat), {kChunk, Retrieval::after, 1.0});
  ASSERT_TRUE(y_bf.isfinite().all().item<bool>());
  EXPECT_LT(max_abs(y_bf.to(torch::kDouble) - y_ref) / max_abs(y_ref), 1e-3);
}

namespace {

// The Titans mixer set to the condition: large memory init, gates at theta ~ theta_max, eta 0.95,
// alpha ~ 0.001, and an input of one repeated row plus noise (aligned q, k, v).
ember::ModelConfig diverging_titans(double clip) {
  ember::ModelConfig c;
  c.vocab_size = 40, c.d_model = 64, c.n_layers = 1, c.n_heads = 2, c.max_seq_len = 160, c.mlp.d_ff = 32;
  c.mixer.kind = "titans";
  auto& o = c.mixer.get<ember::TitansConfig>();
  o.theta_bias = 4.0, o.eta_bias = 3.0, o.alpha_bias = -7.0, o.inner_grad_clip = clip;
  return c;
}

at::Tensor run_mixer(double clip, at::ScalarType dtype, bool bf16) {
  const auto cfg = diverging_titans(clip);
  torch::manual_seed(15);
  ember::Titans mixer(ember::mixer_context(cfg, 0), cfg.mixer.get<ember::TitansConfig>());
  {
    torch::NoGradGuard ng;
    for (auto& p : mixer.named_parameters())
      if (p.key() == "w1" || p.key() == "w2") p.value().mul_(3.0);  // memory init ~ 0.3 per entry
  }
  mixer.to(dtype);
  ember::Rope rope(32, 160, 10000.0);
  auto x = (torch::randn({1, 1, 64}, kF64) + 0.1 * torch::randn({2, 128, 64}, kF64)).to(dtype);
  ember::AutocastScope autocast(torch::kCPU, bf16);
  return mixer.forward(x, rope).to(torch::kDouble);
}

}  // namespace

TEST(TitansStability, TheMixerAtTheConditionIsFiniteWithTheDefaultClipInEveryPrecision) {
  ASSERT_EQ(ember::TitansConfig{}.inner_grad_clip, 1.0);
  const auto y64 = run_mixer(1.0, torch::kDouble, false);
  ASSERT_TRUE(y64.isfinite().all().item<bool>());
  const auto y32 = run_mixer(1.0, torch::kFloat, false);
  ASSERT_TRUE(y32.isfinite().all().item<bool>());
  EXPECT_LT(max_abs(y32 - y64) / max_abs(y64), 1e-3);
  const auto ybf = run_mixer(1.0, torch::kFloat, true);
  ASSERT_TRUE(ybf.isfinite().all().item<bool>());
  EXPECT_LT(max_abs(ybf - y64) / max_abs(y64), 0.1);  // bf16 projections and output: a coarse match
  EXPECT_FALSE(run_mixer(0.0, torch::kFloat, false).isfinite().all().item<bool>());  // unclipped: NaN
}

TEST(TitansStability, OuterGradientsThroughABindingClipEqualCentralDifferences) {
  torch::manual_seed(16);
  auto cfg = diverging_titans(0.02);  // binds on most tokens
  cfg.d_model = 16, cfg.max_seq_len = 32;
  auto& o = cfg.mixer.get<ember::TitansConfig>();
  o.memory_expansion = 2, o.persistent_tokens = 2, o.conv_kernel = 3, o.chunk_size = 4;
  ember::Titans mixer(ember::mixer_context(cfg, 0), o);
  mixer.to(torch::kDouble);
  ember::Rope rope(8, 32, 10000.0);
  auto x = torch::randn({2, 9, 16}, kF64), weights = torch::randn({2, 9, 16}, kF64);
  auto loss_of = [&] { return (mixer.forward(x, rope) * weights).sum(); };
  ember::testing::expect_gradients_match_central_differences(mixer, loss_of,
                                                             {"wk", "wv", "w_gates", "b_gates", "w1", "w2"});
}
