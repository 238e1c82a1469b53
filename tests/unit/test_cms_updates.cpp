// Hope-attention's in-context chunked CMS level updates (the spec's H1; model/fast_swiglu.h, the
// teach signal in model/lm.h): the analytic inner gradient equals autograd; the chunked level equals
// a token-by-token oracle that applies the summed update exactly after every C-th token (T not a
// multiple of C); outer gradients flow through the updates only when asked; at the model: causal
// with the teach signal, no update read before the first boundary, each sequence its own fast
// weights, the forward leaves the parameters alone, and decoding equals the forward. float64.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <functional>

#include "central_differences.h"
#include "ember/run/run_config.h"
#include "ember/model/autocast.h"
#include "ember/model/mlps/cms/fast_swiglu.h"
#include "ember/model/lm.h"
#include "ember/model/mixers/hope_attention.h"
#include "ember/util/error.h"
#include "test_helpers.h"

namespace {

constexpr auto kDouble = torch::kFloat64;
constexpr int64_t kD = 6, kF = 5;

// The SwiGLU of one sequence spelled out: (SiLU(u Wg^T) * (u Wu^T)) Wd^T.
at::Tensor mlp_of(const at::Tensor& g, const at::Tensor& up, const at::Tensor& down, const at::Tensor& u) {
  return (at::silu(u.matmul(g.t())) * u.matmul(up.t())).matmul(down.t());
}

std::shared_ptr<ember::SwiGLU> level(uint64_t seed) {
  torch::manual_seed(seed);
  auto mlp = std::make_shared<ember::SwiGLU>(kD, kF, 0.5, 0.5);
  mlp->to(kDouble);
  return mlp;
}

using StreamSignal = std::function<at::Tensor(const at::Tensor&)>;

// Token by token: read with the current weights; add token t's own gradient of <teach_t, MLP(u_t)>
// (autograd on copies of the weights) to the chunk's sum; after every C-th token take the step.
// With `lens`, teach_t = lens(x_t + MLP(u_t)) from the token's own output stream instead.
at::Tensor oracle(const ember::SwiGLU& mlp, const at::Tensor& u, const at::Tensor& teach, int64_t chunk, double lr,
                  const at::Tensor& x = {}, const StreamSignal& lens = {}) {
  at::AutoGradMode grad_mode(true);
  std::vector<at::Tensor> rows;
  for (int64_t b = 0; b < u.size(0); ++b) {
    std::vector<at::Tensor> w = {mlp.w_gate().detach().clone(), mlp.w_up().detach().clone(),
                                 mlp.w_down().detach().clone()};
    std::vector<at::Tensor> sum = {at::zeros_like(w[0]), at::zeros_like(w[1]), at::zeros_like(w[2])};
    for (int64_t t = 0; t < u.size(1); ++t) {
      auto ut = u[b][t].unsqueeze(0);
      rows.push_back(mlp_of(w[0], w[1], w[2], ut).detach());
      auto delta = lens ? lens(x[b][t].unsqueeze(0) + rows.back()) : teach[b][t].unsqueeze(0);
      std::vector<at::Tensor> leaves;
      for (const auto& x : w) leaves.push_back(x.clone().requires_grad_(true));
      auto inner = (delta * mlp_of(leaves[0], leaves[1], leaves[2], ut)).sum();
      auto grads = torch::autograd::grad({inner}, leaves);
      for (size_t i = 0; i < 3; ++i) sum[i] += grads[i];
      if ((t + 1) % chunk == 0)
        for (size_t i = 0; i < 3; ++i) w[i] -= lr * sum[i], sum[i].zero_();
    }
  }
  return at::cat(rows, 0).view(u.sizes());
}

ember::TeachSignal rows(const at::Tensor& teach) { return {teach, {}}; }

// A lens-like signal: a fixed non-linear function of the stream (what the model's is does not
// matter to the level), the same for every position.
StreamSignal tanh_lens(int64_t seed) {
  torch::manual_seed(seed);
  auto r = torch::randn({kD, kD}, kDouble);
  return [r](const at::Tensor& stream) { return at::tanh(stream.matmul(r)); };
}

ember::TeachSignal lens_signal(const StreamSignal& f) {
  return {{}, [f](const at::Tensor& stream, int64_t) { return f(stream); }};
}

}  // namespace

TEST(CmsUpdates, InnerGradientEqualsAutograd) {
  auto mlp = level(1);
  auto w = ember::SwiGLUWeights::of(*mlp, 2);
  std::vector<at::Tensor> leaves = {w.gate.detach().clone().requires_grad_(true),
                                    w.up.detach().clone().requires_grad_(true),
                                    w.down.detach().clone().requires_grad_(true)};
  auto u = torch::randn({2, 7, kD}, kDouble), teach = torch::randn({2, 7, kD}, kDouble);
  at::Tensor inner = at::zeros({}, kDouble);
  for (int64_t b = 0; b < 2; ++b)
    inner = inner + (teach[b] * mlp_of(leaves[0][b], leaves[1][b], leaves[2][b], u[b])).sum();
  auto expected = torch::autograd::grad({inner}, leaves);
  auto got = ember::swiglu_inner_grad(w, u, teach);
  EXPECT_LT((got.gate - expected[0]).abs().max().item<double>(), 1e-12);
  EXPECT_LT((got.up - expected[1]).abs().max().item<double>(), 1e-12);
  EXPECT_LT((got.down - expected[2]).abs().max().item<double>(), 1e-12);
}

TEST(CmsUpdates, ChunkedLevelEqualsTheTokenByTokenOracle) {
  auto mlp = level(2);
  for (int64_t length : {13, 37}) {
    auto u = torch::randn({2, length, kD}, kDouble), teach = torch::randn({2, length, kD}, kDouble);
    for (int64_t chunk : {1, 2, 4, 16}) {
      torch::NoGradGuard no_grad;
      auto got = ember::fast_swiglu_forward(*mlp, u, u, rows(teach), {chunk, 0.05, false});
      auto expected = oracle(*mlp, u, teach, chunk, 0.05);
      const double scale = expected.abs().max().item<double>();  // grows with the updates
      EXPECT_LT((got - expected).abs().max().item<double>(), 1e-13 * std::max(1.0, scale))
          << "T " << length << ", C " << chunk << ", max |y| " << scale;
    }
    torch::NoGradGuard no_grad;  // the chunk size matters, so the equality is not trivial
    auto c1 = ember::fast_swiglu_forward(*mlp, u, u, rows(teach), {1, 0.05, false});
    auto c16 = ember::fast_swiglu_forward(*mlp, u, u, rows(teach), {16, 0.05, false});
    EXPECT_GT((c1 - c16).abs().max().item<double>(), 1e-3);
    EXPECT_LT((c16.narrow(1, 0, 13) - mlp->forward(u).narrow(1, 0, 13)).abs().max().item<double>(), 1e-12);
  }
}

TEST(CmsUpdates, LensLevelEqualsTheTokenByTokenOracle) {
  auto mlp = level(6);
  const auto f = tanh_lens(7);
  for (int64_t chunk : {1, 3, 4, 16}) {
    auto u = torch::randn({2, 19, kD}, kDouble), x = torch::randn({2, 19, kD}, kDouble);
    torch::NoGradGuard no_grad;
    const ember::LevelUpdate rule{chunk, 0.05, false, ember::TeachSource::lens};
    auto got = ember::fast_swiglu_forward(*mlp, u, x, lens_signal(f), rule);
    auto expected = oracle(*mlp, u, {}, chunk, 0.05, x, f);
    EXPECT_LT((got - expected).abs().max().item<double>(), 1e-13 * std::max(1.0, expected.abs().max().item<double>()))
        << "C " << chunk;
  }
}

TEST(CmsUpdates, DecodingInPiecesEqualsTheChunkedLevel) {
  auto mlp = level(3);
  auto u = torch::randn({2, 23, kD}, kDouble), teach = torch::randn({2, 23, kD}, kDouble);
  auto x = torch::randn({2, 23, kD}, kDouble);
  torch::NoGradGuard no_grad;
  for (auto source : {ember::TeachSource::two_pass, ember::TeachSource::lens}) {
    const ember::LevelUpdate rule{4, 0.05, false, source};
    const bool lens = source == ember::TeachSource::lens;
    const auto f = tanh_lens(9);
    auto full = ember::fast_swiglu_forward(*mlp, u, x, lens ? lens_signal(f) : rows(teach), rule);
    ember::FastSwiGLUState state;
    std::vector<at::Tensor> parts;
    int64_t start = 0;
    for (int64_t n : {1, 1, 3, 5, 4, 1, 8}) {  // two_pass: teach of the positions before each new token
      auto known = start == 0 ? teach.narrow(1, 0, n - 1) : teach.narrow(1, start - 1, n);
      parts.push_back(ember::fast_swiglu_decode(*mlp, u.narrow(1, start, n), x.narrow(1, start, n),
                                                lens ? lens_signal(f) : rows(known), rule, state));
      start += n;
    }
    ASSERT_EQ(start, 23);
    EXPECT_LT((at::cat(parts, 1) - full).abs().max().item<double>(), 1e-12) << (lens ? "lens" : "two_pass");
  }
}

TEST(CmsUpdates, OuterGradientsFlowThroughTheUpdatesOnlyWhenAsked) {
  auto mlp = level(4);
  auto u = torch::randn({1, 9, kD}, kDouble).requires_grad_(true);
  auto teach = torch::randn({1, 9, kD}, kDouble), probe = torch::randn({1, 9, kD}, kDouble);
  const ember::LevelUpdate meta{3, 0.1, true}, stop{3, 0.1, false};
  auto loss = [&](const ember::LevelUpdate& r) {
    return (probe * ember::fast_swiglu_forward(*mlp, u, u, rows(teach), r)).sum();
  };
  ember::testing::expect_gradients_match_central_differences(*mlp, [&] { return loss(meta); },
                                                             {"w_gate", "w_up", "w_down"});
  // Stop-grad: the same values, and the gradient of reads whose chunk weights are theta_0 plus
  // constants (the steps formed without a graph).
  EXPECT_TRUE(torch::equal(loss(meta), loss(stop)));
  mlp->zero_grad();
  auto du_stop = torch::autograd::grad({loss(stop)}, {u})[0];
  at::Tensor steps[3];
  {
    torch::NoGradGuard no_grad;
    auto w = ember::SwiGLUWeights::of(*mlp, 1), w0 = w;
    for (int c = 0; c < 3; ++c) {
      w = w.minus(ember::swiglu_inner_grad(w, u.narrow(1, 3 * c, 3), teach.narrow(1, 3 * c, 3)), 0.1);
      steps[c] = at::cat({(w.gate - w0.gate).flatten(), (w.up - w0.up).flatten(), (w.down - w0.down).flatten()});
    }
  }
  at::Tensor reference = at::zeros({}, kDouble);
  for (int c = 0; c < 3; ++c) {
    auto w = ember::SwiGLUWeights::of(*mlp, 1);
    if (c > 0) {
      auto s = steps[c - 1];
      const int64_t n = kF * kD;
      w = {w.gate + s.narrow(0, 0, n).view({1, kF, kD}), w.up + s.narrow(0, n, n).view({1, kF, kD}),
           w.down + s.narrow(0, 2 * n, n).view({1, kD, kF})};
    }
    reference = reference + (probe.narrow(1, 3 * c, 3) * ember::swiglu_apply(w, u.narrow(1, 3 * c, 3))).sum();
  }
  auto du_reference = torch::autograd::grad({reference}, {u})[0];
  EXPECT_LT((du_stop - du_reference).abs().max().item<double>(), 1e-12);
  auto du_meta = torch::autograd::grad({loss(meta)}, {u})[0];
  EXPECT_GT((du_meta - du_stop).abs().max().item<double>(), 1e-6);  // the updates carry gradient
}

namespace {

ember::ModelConfig hope_model(std::vector<double> chunks, double lr = 0.05,
                              ember::TeachSource signal = ember::TeachSource::two_pass) {
  ember::ModelConfig c;
  c.vocab_size = 40, c.d_model = 32, c.n_layers = 2, c.n_heads = 4, c.max_seq_len = 32;
  c.mlp.d_ff = 48;
  c.init_std = 0.2;  // a teach signal large enough for the updates to show
  c.mixer.kind = "hope_attention";
  auto& h = c.mixer.get<ember::HopeAttentionConfig>();
  h.levels = static_cast<int64_t>(chunks.size());
  h.update = ember::CmsUpdate::chunked;
  h.chunk_sizes = std::move(chunks);
  h.inner_lr = lr;
  h.signal = signal;
  return c;
}

std::shared_ptr<ember::LanguageModel> built(const ember::ModelConfig& c, uint64_t seed = 5) {
  torch::manual_seed(seed);
  auto m = std::make_shared<ember::LanguageModel>(c);
  m->to(kDouble);
  return m;
}

}  // namespace

constexpr ember::TeachSource kSignals[] = {ember::TeachSource::two_pass, ember::TeachSource::lens};

TEST(CmsUpdates, NoUpdateIsReadBeforeTheFirstBoundaryAndLrZeroIsStatic) {
  auto static_cfg = hope_model({3, 5, 0});
  static_cfg.mixer.get<ember::HopeAttentionConfig>().update = ember::CmsUpdate::static_levels;
  auto plain = built(static_cfg);
  ASSERT_FALSE(ember::teach_needs(plain->blocks()).any());
  auto ids = torch::randint(0, 40, {2, 13}, torch::kLong);
  std::vector<at::Tensor> outputs;
  for (auto signal : kSignals) {
    auto learning = built(hope_model({3, 5, 0}, 0.05, signal));
    auto frozen = built(hope_model({3, 5, 0}, 0.0, signal));
    ASSERT_TRUE(ember::teach_needs(learning->blocks()).any());
    torch::NoGradGuard no_grad;
    auto ours = learning->forward(ids), h0 = plain->forward(ids);
    EXPECT_LT(ember::testing::max_abs_diff(frozen->forward(ids), h0), 1e-12);
    EXPECT_LT(ember::testing::max_abs_diff(ours.narrow(1, 0, 3), h0.narrow(1, 0, 3)), 1e-12);  // chunk 0 reads theta_0
    EXPECT_GT(ember::testing::max_abs_diff(ours.narrow(1, 3, 10), h0.narrow(1, 3, 10)), 1e-4);
    outputs.push_back(ours);
  }
  torch::NoGradGuard no_grad;
  EXPECT_GT(ember::testing::max_abs_diff(outputs[0], outputs[1]), 1e-4);  // the two signals are different rules
}

TEST(CmsUpdates, CausalWithTheNextTokenTeachSignal) {
  for (auto signal : kSignals) {
    auto model = built(hope_model({2, 3, 0}, 0.05, signal));
    torch::NoGradGuard no_grad;
    auto ids = torch::randint(0, 40, {1, 12}, torch::kLong);
    auto base = model->forward(ids);
    for (int64_t j : {1, 4, 6, 11}) {
      auto changed = ids.clone();
      changed[0][j] = (changed[0][j].item<int64_t>() + 7) % 40;
      // token j is the target of position j - 1: its teach signal changes, its logits must not
      auto teach = ember::first_pass_teach_signal(model->parts(), ids),
           teach_changed = ember::first_pass_teach_signal(model->parts(), changed);
      EXPECT_GT(ember::testing::max_abs_diff(teach.narrow(1, j - 1, 1), teach_changed.narrow(1, j - 1, 1)), 0.0);
      auto out = model->forward(changed);
      EXPECT_TRUE(torch::equal(out.narrow(1, 0, j), base.narrow(1, 0, j))) << "token " << j;
      EXPECT_GT(ember::testing::max_abs_diff(out.narrow(1, j, 1), base.narrow(1, j, 1)), 0.0);
    }
  }
}

TEST(CmsUpdates, EachSequenceLearnsAloneAndTheForwardLeavesParametersAlone) {
  for (auto signal : kSignals) {
    auto model = built(hope_model({2, 4, 0}, 0.05, signal));
    std::vector<at::Tensor> before;
    for (const auto& p : model->parameters()) before.push_back(p.detach().clone());
    auto ids = torch::randint(0, 40, {2, 14}, torch::kLong);
    auto both = model->forward(ids);
    both.sum().backward();  // training pass too
    size_t i = 0;
    for (const auto& p : model->parameters()) EXPECT_TRUE(torch::equal(p.detach(), before[i++]));
    torch::NoGradGuard no_grad;
    EXPECT_LT(ember::testing::max_abs_diff(both[0], model->forward(ids.narrow(0, 0, 1))[0]), 1e-12);
    EXPECT_LT(ember::testing::max_abs_diff(both[1], model->forward(ids.narrow(0, 1, 1))[0]), 1e-12);
  }
}

TEST(CmsUpdates, DecodingTokenByTokenOrInPiecesEqualsTheForward) {
  for (auto signal : kSignals)
    for (const std::vector<double>& chunks : {std::vector<double>{2, 3, 5}, std::vector<double>{4, 50, 0}}) {
      auto model = built(hope_model(chunks, 0.05, signal));
      torch::NoGradGuard no_grad;
      auto ids = torch::randint(0, 40, {2, 17}, torch::kLong);
      auto full = model->forward(ids);
      // one token at a time, a prompt then tokens (ember generate's prefill), uneven pieces, all at once
      for (const std::vector<int64_t>& pieces : {std::vector<int64_t>(17, 1), std::vector<int64_t>{7, 1, 9},
                                                 std::vector<int64_t>{1, 4, 2, 7, 3}, std::vector<int64_t>{17}}) {
        ember::DecodeState state;
        std::vector<at::Tensor> parts;
        int64_t start = 0;
        for (int64_t n : pieces) parts.push_back(model->decode(ids.narrow(1, start, n), state)), start += n;
        EXPECT_LT(ember::testing::max_abs_diff(at::cat(parts, 1), full), 1e-10)
            << "signal " << static_cast<int>(signal) << ", first chunk " << chunks[0] << ", " << pieces.size()
            << " pieces";
      }
    }
}

// bf16 rounding is ~0.4% per op: the chunked model's error under autocast must stay of the order of
// the static model's with the same weights (it runs more bf16 matmuls: the first pass, the teach
// signal, the steps; measured 2-3x), not blow up as fast weights kept in bf16 would.
TEST(CmsUpdates, Bf16AutocastErrorIsOfTheOrderOfTheStaticModels) {
  torch::manual_seed(3);
  auto ids = torch::randint(0, 40, {2, 13}, torch::kLong);
  auto bf16_error = [&](const ember::ModelConfig& cfg) {
    auto wide = built(cfg, 8);
    torch::manual_seed(8);
    ember::LanguageModel narrow(cfg);  // the same weights in fp32, run under bf16 autocast
    torch::NoGradGuard no_grad;
    auto exact = wide->forward(ids);
    ember::AutocastScope bf16(at::kCPU, true);
    return ember::testing::max_abs_diff(narrow.forward(ids).to(kDouble), exact) / exact.abs().max().item<double>();
  };
  auto learning = hope_model({2, 3, 0}), plain = learning;
  plain.mixer.get<ember::HopeAttentionConfig>().update = ember::CmsUpdate::static_levels;
  const double chunked = bf16_error(learning), reference = bf16_error(plain);
  std::cout << "bf16 relative error: chunked " << chunked << ", static " << reference << "\n";
  EXPECT_GT(chunked, 0.0);  // autocast did run in bf16
  EXPECT_LT(chunked, 4.0 * reference) << "static " << reference;
}

TEST(CmsUpdates, MemoryEstimateCountsEachChunksWeights) {
  auto learning = hope_model({2, 4, 0});
  auto plain = learning;
  plain.mixer.get<ember::HopeAttentionConfig>().update = ember::CmsUpdate::static_levels;
  auto a = built(learning), b = built(plain);
  const double d = 32, f = 16;  // d_ff 48 over 3 levels
  for (int64_t elem : {4, 2}) {
    // and under autocast each level's input read in fp32 (the stream's), cast apart by gate and up
    const double extra = 3 * d * f * (4.0 + (elem < 4 ? elem : 0)) * (1.0 / 2 + 1.0 / 4) + (elem < 4 ? 3 * 2 * d : 0);
    EXPECT_DOUBLE_EQ(
        a->blocks()[0]->activation_bytes_per_token(elem) - b->blocks()[0]->activation_bytes_per_token(elem), extra);
  }
}

TEST(CmsUpdates, ConfigNeedsOneChunkSizePerLevel) {
  try {
    ember::load_config({}, {"model.mixer.kind=hope_attention", "model.mixer.hope_attention.update=chunked",
                            "model.mixer.hope_attention.levels=3"});
    FAIL() << "3 levels with 4 chunk sizes accepted";
  } catch (const ember::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("model.mixer.hope_attention.chunk_sizes"), std::string::npos) << e.what();
  }
  auto c =
      ember::load_config({}, {"model.mixer.kind=hope_attention", "model.mixer.hope_attention.update=chunked",
                              "model.mixer.hope_attention.levels=2", "model.mixer.hope_attention.chunk_sizes=[8, 0]"});
  const auto& h = c.model.mixer.template get<ember::HopeAttentionConfig>();
  ASSERT_EQ(h.level_updates().size(), 2u);
  EXPECT_EQ(h.level_updates()[0].chunk, 8);
  EXPECT_FALSE(h.level_updates()[1].learns());
}

// The model computes only the teach signal the chains ask for, and counts what it costs: a read of the
// head and its gradient (4 d V) per lens level, the first pass's forward and one read for two_pass,
// and each learning level's inner gradient (8 d F), per block.
TEST(CmsUpdates, TeachNeedsFollowTheSignalAndItsFlopsAreCounted) {
  auto lens = built(hope_model({2, 4, 0}, 0.05, ember::TeachSource::lens));
  auto two_pass = built(hope_model({2, 4, 0}, 0.05, ember::TeachSource::two_pass));
  auto static_cfg = hope_model({2, 4, 0});
  static_cfg.mixer.get<ember::HopeAttentionConfig>().update = ember::CmsUpdate::static_levels;
  auto plain = built(static_cfg);
  EXPECT_FALSE(ember::teach_needs(lens->blocks()).first_pass);
  EXPECT_EQ(ember::teach_needs(lens->blocks()).stream_reads, 2 * 2);  // two learning levels in each of two blocks
  EXPECT_TRUE(ember::teach_needs(two_pass->blocks()).first_pass);
  EXPECT_EQ(ember::teach_needs(two_pass->blocks()).stream_reads, 0);
  EXPECT_FALSE(ember::teach_needs(plain->blocks()).any());
  const double d = 32, v = 40, f = 16, inner = 2 * 2 * 8 * d * f;
  EXPECT_DOUBLE_EQ(ember::chain_context_flops_per_token(lens->blocks(), lens->head_weight(), 16), 4 * 4 * d * v + inner);
  const double first_pass = two_pass->blocks()[0]->forward_flops_per_token(16) * 2;
  EXPECT_DOUBLE_EQ(ember::chain_context_flops_per_token(two_pass->blocks(), two_pass->head_weight(), 16), 4 * d * v + first_pass + inner);
  EXPECT_DOUBLE_EQ(ember::chain_context_flops_per_token(plain->blocks(), plain->head_weight(), 16), 0.0);
  EXPECT_DOUBLE_EQ(lens->train_flops_per_token(16) - plain->train_flops_per_token(16), 4 * 4 * d * v + inner);
}
