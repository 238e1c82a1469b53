// The LLaMA-style chassis: shapes, causality, RoPE, SDPA vs reference, parameter counts, tying.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "ember/model/lev.h"
#include "ember/model/lm.h"
#include "ember/model/mixer.h"
#include "ember/model/mixers/attention.h"
#include "ember/model/summary.h"
#include "ember/util/error.h"

using ember::LanguageModel;
using ember::ModelConfig;

namespace {

ModelConfig small_config() {
  ModelConfig c;
  c.vocab_size = 50;
  c.d_model = 32;
  c.n_layers = 2;
  c.n_heads = 4;
  c.max_seq_len = 32;
  c.mlp.d_ff = 48;
  return c;
}

int64_t closed_form_params(const ModelConfig& c) {
  const int64_t d = c.d_model, dh = c.head_dim();
  const int64_t attn = d * c.n_heads * dh + 2 * d * c.kv_heads() * dh + c.n_heads * dh * d;
  const int64_t per_layer = attn + 3 * d * c.mlp.d_ff + 2 * d;  // + two RMSNorm gains
  const int64_t tables = c.embedding.kind == "tied" ? 1 : 2;
  return tables * c.vocab_size * d + c.n_layers * per_layer + d;  // + final norm
}

}  // namespace

TEST(Model, LogitShape) {
  torch::manual_seed(0);
  LanguageModel m(small_config());
  auto ids = torch::randint(0, 50, {3, 7}, torch::kLong);
  EXPECT_EQ(m.forward(ids).sizes(), (std::vector<int64_t>{3, 7, 50}));
  EXPECT_EQ(m.loss(ids, ids).dim(), 0);
}

TEST(Model, ParameterCountMatchesClosedForm) {
  for (std::string kind : {"tied", "untied"}) {
    for (int64_t kv : {0, 2}) {
      ModelConfig c = small_config();
      c.embedding.kind = kind;
      c.n_kv_heads = kv;
      LanguageModel m(c);
      EXPECT_EQ(m.num_parameters(), closed_form_params(c)) << kind << " kv=" << kv;
    }
  }
}

TEST(Model, TiedHeadSharesStorageWithEmbedding) {
  ModelConfig c = small_config();
  LanguageModel tied(c);
  auto table = tied.embedding().tied_table();
  ASSERT_TRUE(table.defined());
  EXPECT_EQ(tied.head_weight().data_ptr(), table.data_ptr());
  // And a gradient through the head lands on the embedding table.
  auto ids = torch::randint(0, 50, {2, 5}, torch::kLong);
  tied.loss(ids, ids).backward();
  EXPECT_GT(table.grad().abs().sum().item<double>(), 0.0);
  c.embedding.kind = "untied";
  LanguageModel untied(c);
  EXPECT_NE(untied.head_weight().data_ptr(), untied.embedding().materialize(16).data_ptr());
  EXPECT_FALSE(untied.embedding().tied_table().defined());
}

TEST(Model, CausalityPerturbingTokenJLeavesEarlierOutputsBitIdentical) {
  for (ember::AttentionImpl impl : {ember::AttentionImpl::sdpa, ember::AttentionImpl::reference}) {
    torch::manual_seed(1);
    ModelConfig c = small_config();
    c.mixer.get<ember::AttentionConfig>().impl = impl;
    LanguageModel m(c);
    torch::NoGradGuard ng;
    auto ids = torch::randint(0, 50, {2, 16}, torch::kLong);
    auto base = m.forward(ids);
    for (int64_t j : {3, 9, 15}) {
      auto changed = ids.clone();
      changed.index_put_({torch::indexing::Slice(), j}, (ids.index({torch::indexing::Slice(), j}) + 7) % 50);
      auto out = m.forward(changed);
      EXPECT_TRUE(torch::equal(out.narrow(1, 0, j), base.narrow(1, 0, j))) << ember::enum_name(impl) << " j=" << j;
      EXPECT_FALSE(torch::equal(out.narrow(1, j, 1), base.narrow(1, j, 1))) << ember::enum_name(impl) << " j=" << j;
    }
  }
}

TEST(Model, SdpaEqualsReferenceInFloat64) {
  torch::manual_seed(2);
  ModelConfig c = small_config();
  c.n_kv_heads = 2;
  LanguageModel m(c);
  m.to(torch::kDouble);
  torch::NoGradGuard ng;
  auto ids = torch::randint(0, 50, {2, 20}, torch::kLong);
  m.set_attention_impl(ember::AttentionImpl::sdpa);
  auto fused = m.forward(ids);
  m.set_attention_impl(ember::AttentionImpl::reference);
  auto ref = m.forward(ids);
  EXPECT_LT((fused - ref).abs().max().item<double>(), 1e-12);
}

TEST(Model, AttentionReferenceMatchesExplicitLoop) {
  torch::manual_seed(3);
  auto q = torch::randn({1, 1, 5, 4}, torch::kDouble), k = torch::randn({1, 1, 5, 4}, torch::kDouble),
       v = torch::randn({1, 1, 5, 4}, torch::kDouble);
  auto y = ember::Attention::reference_attention(q, k, v);
  for (int64_t i = 0; i < 5; ++i) {
    auto s = (k[0][0].narrow(0, 0, i + 1).matmul(q[0][0][i])) / 2.0;  // sqrt(d_h) = 2
    auto p = torch::softmax(s, 0);
    auto expect = p.matmul(v[0][0].narrow(0, 0, i + 1));
    EXPECT_LT((y[0][0][i] - expect).abs().max().item<double>(), 1e-14);
  }
}

TEST(Model, RopeScoresDependOnlyOnRelativePosition) {
  ember::Rope rope(8, 64, 10000.0);
  torch::manual_seed(4);
  auto q = torch::randn({1, 1, 1, 8}, torch::kDouble), k = torch::randn({1, 1, 1, 8}, torch::kDouble);
  auto score = [&](int64_t m, int64_t n) { return (rope.apply(q, m) * rope.apply(k, n)).sum().item<double>(); };
  for (int64_t s : {1, 5, 20}) {
    EXPECT_NEAR(score(3, 1), score(3 + s, 1 + s), 1e-6);
    EXPECT_NEAR(score(10, 2), score(10 + s, 2 + s), 1e-6);
  }
  EXPECT_GT(std::abs(score(3, 1) - score(3, 2)), 1e-6);  // but it does depend on m - n
  // Rotation preserves norms; position 0 is the identity.
  EXPECT_NEAR(rope.apply(q, 17).norm().item<double>(), q.norm().item<double>(), 1e-6);
  EXPECT_LT((rope.apply(q, 0) - q).abs().max().item<double>(), 1e-7);
}

TEST(Model, RmsNormMatchesFormula) {
  ember::RMSNorm norm(16, 1e-6);
  torch::manual_seed(5);
  auto x = torch::randn({4, 16});
  EXPECT_LT((norm.forward(x) - norm.reference(x)).abs().max().item<double>(), 1e-6);
}

TEST(Model, InitStdAndResidualScaling) {
  ModelConfig c = small_config();
  c.d_model = 256;
  c.n_heads = 4;
  c.mlp.d_ff = 512;
  c.n_layers = 8;
  c.scale_residual_init = true;
  torch::manual_seed(6);
  LanguageModel m(c);
  auto params = m.named_parameters();
  EXPECT_NEAR(params["layers.0.mixer.wq"].std().item<double>(), 0.02, 0.001);
  EXPECT_NEAR(params["layers.0.mixer.wo"].std().item<double>(), 0.02 / 4.0, 0.0005);  // 1/sqrt(2L)
  EXPECT_NEAR(params["layers.3.mlp.w_down"].std().item<double>(), 0.02 / 4.0, 0.0005);
  EXPECT_DOUBLE_EQ(params["final_norm.weight"].mean().item<double>(), 1.0);
}

TEST(Model, SameSeedSameWeights) {
  torch::manual_seed(7);
  LanguageModel a(small_config());
  torch::manual_seed(7);
  LanguageModel b(small_config());
  for (const auto& item : a.named_parameters())
    EXPECT_TRUE(torch::equal(item.value(), b.named_parameters()[item.key()])) << item.key();
}

TEST(Model, SummaryCountsEveryLayerAndAddsUpToTheModel) {
  ModelConfig c = small_config();
  c.n_layers = 3;
  c.embedding.kind = "untied";
  const auto s = ember::summarize_model(c, 16);
  ASSERT_EQ(s.layers.size(), 3u);
  for (const auto& l : s.layers) {
    EXPECT_EQ(l.params, l.mixer_params + l.mlp_params + 2 * c.d_model);  // + two RMSNorm gains
    EXPECT_EQ(l.mlp_params, 3 * c.d_model * 48);
    EXPECT_EQ(l.d_ff, 48);
  }
  EXPECT_EQ(s.total_params, closed_form_params(c));
  EXPECT_EQ(s.embedding_params, c.vocab_size * c.d_model);
  EXPECT_EQ(s.head_params, c.vocab_size * c.d_model + c.d_model);  // head + final norm
  EXPECT_EQ(s.embedding_params + s.body_params + s.head_params, s.total_params);
  EXPECT_FALSE(s.embedding_budget.has_value());
  EXPECT_EQ(s.to_json()["layers"].size(), 3u);
  c.embedding.kind = "lev";
  const auto lev = ember::summarize_model(c, 16);
  ASSERT_TRUE(lev.embedding_budget.has_value());
  EXPECT_EQ(lev.embedding_budget->params, ember::lev_parameter_count(50, 32, c.embedding.get<ember::LevConfig>()));
  EXPECT_EQ(lev.embedding_params, lev.embedding_budget->params);  // LEV is its own budget
}

TEST(Model, EveryRegisteredMixerBuildsTrainsAndIsCausal) {
  size_t kinds = 0;
  for (const auto& row : ember::mixer_kinds()) {
    torch::manual_seed(4);
    ModelConfig c = small_config();
    c.mixer.kind = row.name;
    LanguageModel m(c);
    auto ids = torch::randint(0, 50, {2, 12}, torch::kLong);
    auto loss = m.loss(ids, ids);
    loss.backward();
    EXPECT_TRUE(std::isfinite(loss.item<double>())) << row.name;
    for (const auto& p : m.parameters()) EXPECT_TRUE(p.grad().defined()) << row.name;
    torch::NoGradGuard ng;
    auto base = m.forward(ids);
    auto changed = ids.clone();
    changed.index_put_({torch::indexing::Slice(), 6}, (ids.index({torch::indexing::Slice(), 6}) + 1) % 50);
    EXPECT_TRUE(torch::equal(m.forward(changed).narrow(1, 0, 6), base.narrow(1, 0, 6))) << row.name;
    ++kinds;
  }
  EXPECT_EQ(kinds, ember::mixer_kind_names().size());
  EXPECT_GE(kinds, 2u);
}

TEST(Model, UnknownKindsAreErrorsThatListTheKinds) {
  ModelConfig c = small_config();
  c.mixer.kind = "atention";
  try {
    LanguageModel m(c);
    FAIL() << "unknown mixer kind accepted";
  } catch (const ember::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "model.mixer.kind: unknown kind 'atention' (kinds: attention, gated_attention, short_conv, titans, hope_attention) "
                  "(did you mean 'attention'?)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(ember::embedding_kind("table"), ember::ConfigError);
}
