// Gated attention (docs/mixers.md, gated attention): G1 reduction, causality, gate shape and position, the
// gate at initialisation, parameter count.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "ember/model/lm.h"
#include "ember/model/mixer_registry.h"
#include "ember/model/mixers/attention.h"
#include "ember/model/rope.h"
#include "ember/util/error.h"
#include "test_helpers.h"

using ember::Attention;
using ember::ModelConfig;

namespace {

ModelConfig gated_config(ember::Gate gate) {
  ModelConfig c;
  c.vocab_size = 50, c.d_model = 32, c.n_layers = 2, c.n_heads = 4, c.n_kv_heads = 2, c.max_seq_len = 32;
  c.mlp.d_ff = 48;
  c.mixer.kind = "gated_attention";
  c.mixer.get<ember::GatedAttentionConfig>().gate = gate;
  return c;
}

// Layer 0's mixer as the registry builds it.
std::shared_ptr<Attention> attention_of(const ModelConfig& c) {
  return std::dynamic_pointer_cast<Attention>(ember::make_mixer(ember::mixer_context(c, 0)));
}

}  // namespace

TEST(GatedAttention, ZeroGateLogitsHalveThePlainAttentionOutputExactly) {
  // G1 reduction: with W_theta = 0 the gate is sigmoid(0) = 1/2 everywhere, and scaling by a power
  // of two is exact, so the output is bit-for-bit half of plain attention with the same weights.
  for (ember::Gate gate : {ember::Gate::elementwise, ember::Gate::headwise}) {
    torch::manual_seed(1);
    auto gated = attention_of(gated_config(gate));
    ModelConfig plain_cfg = gated_config(gate);
    plain_cfg.mixer.kind = "attention";
    auto plain = attention_of(plain_cfg);
    torch::NoGradGuard ng;
    for (const char* w : {"wq", "wk", "wv", "wo"}) plain->named_parameters()[w].copy_(gated->named_parameters()[w]);
    gated->named_parameters()["wg"].zero_();
    ember::Rope rope(8, 32, 10000.0);
    auto x = torch::randn({2, 9, 32});
    gated->set_impl(ember::AttentionImpl::reference), plain->set_impl(ember::AttentionImpl::reference);
    EXPECT_TRUE(torch::equal(gated->forward(x, rope), 0.5 * plain->forward(x, rope))) << ember::enum_name(gate);
  }
}

TEST(GatedAttention, GateShapeAndPositionAfterSdpaBeforeTheOutputProjection) {
  torch::manual_seed(2);
  ModelConfig c = gated_config(ember::Gate::elementwise);
  c.n_kv_heads = 4;
  auto m_ptr = attention_of(c);
  Attention& m = *m_ptr;
  m.set_impl(ember::AttentionImpl::reference);
  torch::NoGradGuard ng;
  ember::Rope rope(8, 32, 10000.0);
  auto x = torch::randn({2, 7, 32}, torch::kDouble);
  m.to(torch::kDouble);
  auto params = m.named_parameters();
  auto G = m.gate_values(x);
  EXPECT_EQ(G.sizes(), (std::vector<int64_t>{2, 7, 4, 8}));
  auto heads = [&](const char* w) { return at::linear(x, params[w]).view({2, 7, 4, 8}).transpose(1, 2); };
  auto y = Attention::reference_attention(rope.apply(heads("wq")), rope.apply(heads("wk")), heads("wv"));
  auto g1 = at::linear((y.transpose(1, 2) * G).reshape({2, 7, 32}), params["wo"]);  // out = W_O(concat(Y (.) G))
  auto out = m.forward(x, rope);
  EXPECT_LT((out - g1).abs().max().item<double>(), 1e-12);
  auto g5 = at::linear(y.transpose(1, 2).reshape({2, 7, 32}), params["wo"]) * G.reshape({2, 7, 32});  // after W_O
  EXPECT_GT((out - g5).abs().max().item<double>(), 0.05 * out.abs().max().item<double>());
  ModelConfig h = gated_config(ember::Gate::headwise);
  EXPECT_EQ(attention_of(h)->gate_values(torch::randn({2, 7, 32})).sizes(), (std::vector<int64_t>{2, 7, 4, 1}));
}

TEST(GatedAttention, CausalAndTheGateOfTokenTDependsOnlyOnXt) {
  torch::manual_seed(3);
  auto m_ptr = attention_of(gated_config(ember::Gate::elementwise));
  Attention& m = *m_ptr;
  torch::NoGradGuard ng;
  ember::Rope rope(8, 32, 10000.0);
  auto x = torch::randn({2, 12, 32});
  auto base = m.forward(x, rope);
  auto gate = m.gate_values(x);
  for (int64_t j : {4, 11}) {
    auto changed = x.clone();
    changed.index({torch::indexing::Slice(), j}).add_(1.0);
    auto out = m.forward(changed, rope);
    EXPECT_TRUE(torch::equal(out.narrow(1, 0, j), base.narrow(1, 0, j))) << j;
    EXPECT_FALSE(torch::equal(out.narrow(1, j, 1), base.narrow(1, j, 1))) << j;
    auto g = m.gate_values(changed);
    EXPECT_TRUE(torch::equal(g.narrow(1, 0, j), gate.narrow(1, 0, j)));
    if (j + 1 < 12) {
      EXPECT_TRUE(torch::equal(g.narrow(1, j + 1, 12 - j - 1), gate.narrow(1, j + 1, 12 - j - 1)));
    }
  }
}

TEST(GatedAttention, GateIsAboutOneHalfAtInitialisation) {
  torch::manual_seed(4);
  auto m_ptr = attention_of(gated_config(ember::Gate::elementwise));
  Attention& m = *m_ptr;
  auto x = torch::randn({4, 32, 32});
  x = x / x.pow(2).mean(-1, true).sqrt();  // a normalised layer input, as after RMSNorm
  const double mean = m.gate_values(x).mean().item<double>();
  EXPECT_NEAR(mean, 0.5, 0.01);
}

TEST(GatedAttention, ParameterCountAddsDTimesHTimesDhOrDTimesH) {
  ModelConfig plain = gated_config(ember::Gate::none);
  const int64_t base = ember::testing::parameter_count(ember::LanguageModel(plain));
  plain.mixer.kind = "attention";
  EXPECT_EQ(ember::testing::parameter_count(ember::LanguageModel(plain)), base);  // gate none is plain attention
  EXPECT_EQ(ember::testing::parameter_count(ember::LanguageModel(gated_config(ember::Gate::elementwise))),
            base + 2 * 32 * 4 * 8);  // + d H d_h per layer
  EXPECT_EQ(ember::testing::parameter_count(ember::LanguageModel(gated_config(ember::Gate::headwise))), base + 2 * 32 * 4);  // + d H per layer
}

TEST(GatedAttention, LanguageModelTrainsAStepAndCountsTheGateFlops) {
  torch::manual_seed(5);
  ModelConfig c = gated_config(ember::Gate::elementwise);
  ember::LanguageModel gated(c);
  c.mixer.get<ember::GatedAttentionConfig>().gate = ember::Gate::none;
  ember::LanguageModel plain(c);
  auto ids = torch::randint(0, 50, {2, 16}, torch::kLong);
  auto loss = gated.loss(ids, ids);
  loss.backward();
  EXPECT_TRUE(std::isfinite(loss.item<double>()));
  EXPECT_TRUE(gated.named_parameters()["layers.0.mixer.wg"].grad().abs().sum().item<double>() > 0);
  // forward FLOPs per token grow by 2 d H d_h per layer (the gate projection), x3 for training
  EXPECT_EQ(gated.train_flops_per_token(16) - plain.train_flops_per_token(16), 3 * 2 * 2 * 32 * 32);
}

TEST(GatedAttention, AttentionProbabilitiesAreCausalRowsAndUniformWithoutQueries) {
  torch::manual_seed(6);
  auto m_ptr = attention_of(gated_config(ember::Gate::headwise));
  Attention& m = *m_ptr;
  torch::NoGradGuard ng;
  ember::Rope rope(8, 32, 10000.0);
  auto x = torch::randn({2, 10, 32});
  auto P = m.attention_probabilities(x, rope);
  EXPECT_EQ(P.sizes(), (std::vector<int64_t>{2, 4, 10, 10}));
  EXPECT_LT((P.sum(-1) - 1).abs().max().item<double>(), 1e-6);
  EXPECT_EQ(P.triu(1).abs().max().item<double>(), 0.0);  // nothing on future tokens
  m.named_parameters()["wq"].zero_();                    // all scores equal: P[t, j] = 1 / (t + 1) for j <= t
  auto uniform = m.attention_probabilities(x, rope).select(-1, 0);
  auto want = 1.0 / torch::arange(1, 11, torch::kFloat);
  EXPECT_LT((uniform - want).abs().max().item<double>(), 1e-6);
}

TEST(GatedAttention, MatchParamsNarrowsTheMlpToPayForTheGate) {
  // d = 32, H = 4, d_h = 8: an elementwise gate has 32 * 32 = 1024 weights per layer; the MLP loses
  // round(1024 / 96) = 11 units of width (3 d = 96 weights each), leaving -32 weights per layer.
  ModelConfig plain = gated_config(ember::Gate::none), matched = gated_config(ember::Gate::elementwise);
  matched.mixer.get<ember::GatedAttentionConfig>().match_params = true;
  ember::LanguageModel a(plain), b(matched);
  for (const auto& block : b.blocks()) EXPECT_EQ(block->mlp().d_ff(), 48 - 11);
  EXPECT_EQ(b.num_parameters() - a.num_parameters(), 2 * (1024 - 11 * 96));
  auto headwise = gated_config(ember::Gate::headwise);  // 32 * 4 = 128 weights: round(128 / 96) = 1
  headwise.mixer.get<ember::GatedAttentionConfig>().match_params = true;
  EXPECT_EQ(ember::LanguageModel(headwise).blocks()[0]->mlp().d_ff(), 47);
  EXPECT_EQ(ember::gate_matched_d_ff(48, 32, 1024), 37);
  EXPECT_THROW(ember::gate_matched_d_ff(10, 32, 1024), ember::ConfigError);
}
