// The LLaMA-style chassis: shapes, causality, RoPE, SDPA vs reference, parameter counts, tying.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "attention_impl.h"
#include "ember/model/feed_forward_registry.h"
#include "ember/model/embedding_registry.h"
#include "ember/model/lev.h"
#include "ember/model/lm.h"
#include "ember/model/mixer_registry.h"
#include "ember/model/mixers/attention.h"
#include "ember/model/mlps/cms/cms_config.h"
#include "ember/model/rope.h"
#include "ember/model/summary.h"
#include "ember/model/table_embedding.h"
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

// Training FLOPs per token: 6 per matmul weight element (the head included, the input lookup not;
// norm gains are no matmul) plus 3 x the attention's QK^T and PV (2 matmuls x 2 d T forward).
double closed_form_train_flops(const ModelConfig& c, int64_t T) {
  const int64_t d = c.d_model, dh = c.head_dim();
  const int64_t attn = d * c.n_heads * dh + 2 * d * c.kv_heads() * dh + c.n_heads * dh * d;
  const int64_t weights = c.n_layers * (attn + 3 * d * c.mlp.d_ff) + c.vocab_size * d;
  return 6.0 * static_cast<double>(weights) + 3.0 * static_cast<double>(c.n_layers * 4 * c.n_heads * dh * T);
}

}  // namespace

TEST(Model, LogitShape) {
  torch::manual_seed(0);
  LanguageModel m(small_config());
  auto ids = torch::randint(0, 50, {3, 7}, torch::kLong);
  EXPECT_EQ(m.forward(ids).sizes(), (std::vector<int64_t>{3, 7, 50}));
  EXPECT_EQ(m.loss(ids, ids).dim(), 0);
}

TEST(Model, ParameterCountAndTrainFlopsMatchClosedForm) {
  for (std::string kind : {"tied", "untied"}) {
    for (int64_t kv : {0, 2}) {
      ModelConfig c = small_config();
      c.embedding.kind = kind;
      c.n_kv_heads = kv;
      LanguageModel m(c);
      EXPECT_EQ(m.num_parameters(), closed_form_params(c)) << kind << " kv=" << kv;
      EXPECT_EQ(m.train_flops_per_token(24), closed_form_train_flops(c, 24)) << kind << " kv=" << kv;
      // Causal-halved: QK^T and PV over T(T+1)/2 ~ T^2/2 scores, 3 x (2 matmuls x d T / 2) per layer.
      const double halved = 3.0 * static_cast<double>(c.n_layers * 2 * c.n_heads * c.head_dim() * 24);
      EXPECT_EQ(m.causal_train_flops_per_token(24), closed_form_train_flops(c, 24) - halved) << kind;
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

// A tied table's lookup adds its rows into the head's gradient as a sparse gradient: the table's
// gradient is still dense and equals the closed form (rows summed per id, repeats included, plus
// the head's S^T h), also when accumulated over two backward passes.
TEST(Model, TiedTableGradientIsDenseAndExact) {
  for (bool lookup_first : {true, false}) {  // which gradient reaches the table first in backward
    torch::manual_seed(5);
    ember::TableEmbedding table(11, 6, 0.02, /*tied=*/true);
    table.to(torch::kDouble);
    auto w = table.tied_table();
    auto ids = torch::tensor({{3, 7, 3}, {0, 10, 3}}, torch::kLong);
    auto r = torch::randn({2, 3, 6}, torch::kDouble), h = torch::randn({4, 6}, torch::kDouble);
    auto s = torch::randn({4, 11}, torch::kDouble);
    auto backward = [&] {
      at::Tensor lookup, head;
      if (lookup_first)
        head = (at::linear(h, w) * s).sum(), lookup = (table.forward(ids) * r).sum();
      else
        lookup = (table.forward(ids) * r).sum(), head = (at::linear(h, w) * s).sum();
      (lookup + head).backward();
    };
    backward();
    ASSERT_FALSE(w.grad().is_sparse());
    auto expect = torch::zeros({11, 6}, torch::kDouble).index_add_(0, ids.flatten(), r.reshape({-1, 6})) + s.t().mm(h);
    EXPECT_LT((w.grad() - expect).abs().max().item<double>(), 1e-12) << lookup_first;
    backward();
    EXPECT_LT((w.grad() - 2 * expect).abs().max().item<double>(), 1e-12) << lookup_first;
  }
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
  ember::testing::set_attention_impl(m, ember::AttentionImpl::sdpa);
  auto fused = m.forward(ids);
  ember::testing::set_attention_impl(m, ember::AttentionImpl::reference);
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

// The fused rotation against the rotate-half formula written out per element in fp64, on a
// transposed (strided) input as attention passes it, at an offset; in fp32 and for a bf16 input
// (rotated in fp32); and its gradient against autograd through the formula.
namespace {
at::Tensor rope_formula(const at::Tensor& x, int64_t offset, double base) {
  const int64_t T = x.size(2), dh = x.size(3), half = dh / 2;
  auto out = torch::empty_like(x, torch::kDouble);
  auto xd = x.to(torch::kDouble);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t i = 0; i < half; ++i) {
      const double angle = static_cast<double>(offset + t) * std::pow(base, -2.0 * i / dh);
      auto a = xd.select(2, t).select(2, i), b = xd.select(2, t).select(2, half + i);
      out.select(2, t).select(2, i).copy_(a * std::cos(angle) - b * std::sin(angle));
      out.select(2, t).select(2, half + i).copy_(b * std::cos(angle) + a * std::sin(angle));
    }
  return out;
}
}  // namespace

TEST(Model, RopeEqualsTheFormulaWithItsGradient) {
  torch::manual_seed(4);
  ember::Rope rope(8, 40, 10000.0);
  auto x = torch::randn({2, 9, 3, 8}, torch::kDouble).transpose(1, 2).requires_grad_();  // [B, H, T, d_h]
  ASSERT_FALSE(x.is_contiguous());
  auto y = rope.apply(x, 5);
  EXPECT_LT((y - rope_formula(x.detach(), 5, 10000.0)).abs().max().item<double>(), 1e-14);
  auto g = torch::randn_like(y);
  (y * g).sum().backward();
  auto x2 = x.detach().clone().requires_grad_();
  auto cos = torch::empty({9, 4}, torch::kDouble), sin = torch::empty({9, 4}, torch::kDouble);
  for (int64_t t = 0; t < 9; ++t)
    for (int64_t i = 0; i < 4; ++i) {
      const double angle = (5.0 + t) * std::pow(10000.0, -2.0 * i / 8);
      cos[t][i] = std::cos(angle), sin[t][i] = std::sin(angle);
    }
  auto a = x2.narrow(-1, 0, 4), b = x2.narrow(-1, 4, 4);
  (torch::cat({a * cos - b * sin, b * cos + a * sin}, -1) * g).sum().backward();
  EXPECT_LT((x.grad() - x2.grad()).abs().max().item<double>(), 1e-14);
  for (auto dtype : {torch::kFloat, torch::kBFloat16}) {
    auto xf = x.detach().to(dtype);
    auto yf = rope.apply(xf, 5);
    EXPECT_EQ(yf.scalar_type(), torch::kFloat);  // rotated in fp32, as Python does
    EXPECT_LT((yf.to(torch::kDouble) - rope_formula(xf, 5, 10000.0)).abs().max().item<double>(), 1e-5);
  }
}

// A projection's heads, [B, T, H, d_h] in memory and seen as [B, H, T, d_h], keep that memory through
// the rotation and so does their gradient, which then flows back into the projection without a
// transpose copy; a narrowed (not dense) view is rotated into a contiguous tensor.
TEST(Model, RopeKeepsTheHeadsLayoutForwardAndBackward) {
  ember::Rope rope(8, 40, 10000.0);
  for (const auto dtype : {torch::kDouble, torch::kFloat}) {
    auto leaf = torch::randn({2, 9, 3, 8}, dtype).requires_grad_();
    auto heads = leaf.transpose(1, 2);  // [B, H, T, d_h] over [B, T, H, d_h] memory
    auto y = rope.apply(heads, 2);
    EXPECT_EQ(y.strides(), heads.strides());
    const auto dx = torch::autograd::grad({y}, {heads}, {torch::randn_like(y)})[0];
    EXPECT_EQ(dx.strides(), heads.strides());
    EXPECT_TRUE(dx.transpose(1, 2).is_contiguous());  // the projection's [B, T, H d_h] as it is
    auto narrowed = heads.narrow(2, 1, 5);
    EXPECT_TRUE(rope.apply(narrowed, 0).is_contiguous());
    EXPECT_LT((rope.apply(narrowed, 0) - rope.apply(narrowed.contiguous(), 0)).abs().max().item<double>(), 1e-6);
  }
}

// Llama 3.2 1B's RoPE (config.json: rope_theta 500000, rope_scaling llama3, factor 32, low 1, high 4,
// original_max_position_embeddings 8192, head_dim 64): the frequencies transformers 5.24 computes
// (ROPE_INIT_FUNCTIONS["llama3"], in fp32) for the kept (13, 14), interpolated (15-17) and slowed
// (18, 31) bands.
TEST(Model, RopeLlama3ScalingMatchesTransformers) {
  ember::RopeScalingConfig s;
  s.type = ember::RopeScalingType::llama3;
  s.factor = 32.0, s.low_freq_factor = 1.0, s.high_freq_factor = 4.0, s.original_max_seq_len = 8192;
  const auto omega = ember::rope_frequencies(64, 500000.0, s);
  const std::vector<std::pair<int64_t, double>> transformers = {
      {13, 0.00483942124992609},  {14, 0.0032114461064338684}, {15, 0.0012905480107292533},
      {16, 0.000429556705057621}, {17, 9.708286233944818e-05}, {18, 1.9461638657958247e-05},
      {31, 9.418306490260875e-08}};
  for (const auto& [i, expected] : transformers)
    EXPECT_NEAR(omega[i].item<double>() / expected, 1.0, 1e-6) << "omega_" << i;
  const auto plain = ember::rope_frequencies(64, 500000.0);
  EXPECT_EQ(plain[13].item<double>(), omega[13].item<double>());
  EXPECT_NEAR(plain[31].item<double>() / omega[31].item<double>(), 32.0, 1e-12);
}

TEST(Model, RmsNormMatchesFormula) {
  ember::RMSNorm norm(16, 1e-6);
  torch::manual_seed(5);
  auto x = torch::randn({4, 16});
  EXPECT_LT((norm.forward(x) - norm.reference(x)).abs().max().item<double>(), 1e-6);
}

// The fused CPU pass and its gradients (input and gain) against autograd through the formula in
// fp64, over enough rows for every thread to hold a partial gain gradient, at a width that is not
// a multiple of the vector lanes; in fp32 against the same within fp32 rounding.
TEST(Model, RmsNormGradientsMatchAutograd) {
  for (auto dtype : {torch::kDouble, torch::kFloat}) {
    ember::RMSNorm norm(37, 1e-5);
    norm.to(dtype);
    torch::manual_seed(6);
    auto gain = norm.named_parameters()["weight"];
    {
      torch::NoGradGuard ng;
      gain.uniform_(0.5, 1.5);
    }
    auto x = (torch::randn({3, 700, 37}, torch::kDouble) * 3).to(dtype).requires_grad_();
    auto w = torch::randn({3, 700, 37}, torch::kDouble).to(dtype);
    (norm.forward(x) * w).sum().backward();
    auto xr = x.detach().to(torch::kDouble).requires_grad_();
    auto gr = gain.detach().to(torch::kDouble).requires_grad_();
    auto yr = xr * torch::rsqrt(xr.pow(2).mean(-1, true) + 1e-5) * gr;
    (yr * w.to(torch::kDouble)).sum().backward();
    const double tol = dtype == torch::kDouble ? 1e-11 : 1e-3;
    EXPECT_LT((norm.forward(x).to(torch::kDouble) - yr).abs().max().item<double>(), tol / 10) << dtype;
    EXPECT_LT((x.grad().to(torch::kDouble) - xr.grad()).abs().max().item<double>(), tol) << dtype;
    EXPECT_LT((gain.grad().to(torch::kDouble) - gr.grad()).abs().max().item<double>(), tol * 10) << dtype;
  }
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

namespace {

// A model of `c` trains a step with a gradient on every parameter, and is causal.
void builds_trains_and_is_causal(const ModelConfig& c, const std::string& name) {
  torch::manual_seed(4);
  LanguageModel m(c);
  auto ids = torch::randint(0, 50, {2, 12}, torch::kLong);
  auto loss = m.loss(ids, ids);
  loss.backward();
  EXPECT_TRUE(std::isfinite(loss.item<double>())) << name;
  for (const auto& p : m.named_parameters()) {
    ASSERT_TRUE(p.value().grad().defined()) << name << " " << p.key();
    EXPECT_GT(p.value().grad().abs().max().item<double>(), 0.0) << name << " " << p.key() << " gets no gradient";
  }
  torch::NoGradGuard ng;
  auto base = m.forward(ids);
  auto changed = ids.clone();
  changed.index_put_({torch::indexing::Slice(), 6}, (ids.index({torch::indexing::Slice(), 6}) + 1) % 50);
  auto after = m.forward(changed);
  EXPECT_TRUE(torch::equal(after.narrow(1, 0, 6), base.narrow(1, 0, 6))) << name;  // the past is untouched
  EXPECT_FALSE(torch::equal(after.narrow(1, 6, 1), base.narrow(1, 6, 1))) << name << " ignores its own token";
}

}  // namespace

TEST(Model, EveryRegisteredMixerBuildsTrainsAndIsCausal) {
  size_t kinds = 0;
  for (const auto& row : ember::mixer_kinds()) {
    ModelConfig c = small_config();
    c.mixer.kind = row.name;
    builds_trains_and_is_causal(c, row.name);
    ++kinds;
  }
  EXPECT_EQ(kinds, ember::mixer_kind_names().size());
  EXPECT_GE(kinds, 2u);
}

// Each feed-forward kind with its default options, and the cms chain learning in context too.
TEST(Model, EveryRegisteredFeedForwardBuildsTrainsAndIsCausal) {
  size_t kinds = 0;
  for (const auto& row : ember::feed_forward_kinds()) {
    ModelConfig c = small_config();
    c.mlp.kind = row.name;
    builds_trains_and_is_causal(c, row.name);
    ++kinds;
  }
  EXPECT_EQ(kinds, ember::feed_forward_kind_names().size());
  ModelConfig c = small_config();
  c.mlp.kind = "cms";
  auto& cms = c.mlp.get<ember::CmsConfig>();
  cms.levels = 2, cms.update = ember::CmsUpdate::chunked, cms.chunk_sizes = {3, 0};
  builds_trains_and_is_causal(c, "cms chunked");
}

TEST(Model, UnknownKindsAreErrorsThatListTheKinds) {
  ModelConfig c = small_config();
  c.mixer.kind = "atention";
  try {
    LanguageModel m(c);
    FAIL() << "unknown mixer kind accepted";
  } catch (const ember::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("model.mixer.kind: unknown kind 'atention' (kinds: attention, "
                                         "gated_attention, short_conv, titans, hope_attention) "
                                         "(did you mean 'attention'?)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(ember::embedding_kind("table"), ember::ConfigError);
}
