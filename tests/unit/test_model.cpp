// The LLaMA-style chassis: shapes, causality, RoPE, SDPA vs reference, parameter counts, tying.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "ember/model/lm.h"
#include "ember/model/mixers/attention.h"

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
  for (std::string impl : {"sdpa", "reference"}) {
    torch::manual_seed(1);
    ModelConfig c = small_config();
    c.mixer.impl = impl;
    LanguageModel m(c);
    torch::NoGradGuard ng;
    auto ids = torch::randint(0, 50, {2, 16}, torch::kLong);
    auto base = m.forward(ids);
    for (int64_t j : {3, 9, 15}) {
      auto changed = ids.clone();
      changed.index_put_({torch::indexing::Slice(), j}, (ids.index({torch::indexing::Slice(), j}) + 7) % 50);
      auto out = m.forward(changed);
      EXPECT_TRUE(torch::equal(out.narrow(1, 0, j), base.narrow(1, 0, j))) << impl << " j=" << j;
      EXPECT_FALSE(torch::equal(out.narrow(1, j, 1), base.narrow(1, j, 1))) << impl << " j=" << j;
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
  m.set_reference_attention(false);
  auto fused = m.forward(ids);
  m.set_reference_attention(true);
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
  auto score = [&](int64_t m, int64_t n) {
    return (rope.apply(q, m) * rope.apply(k, n)).sum().item<double>();
  };
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
