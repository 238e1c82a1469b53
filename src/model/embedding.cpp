#include "ember/model/embedding.h"

#include <fmt/format.h>

#include <algorithm>

#include "ember/config/kind_table.h"
#include "ember/model/autocast.h"
#include "ember/util/error.h"
#include "ember/model/embedding_baselines.h"
#include "ember/model/lev.h"
#include "ember/model/table_embedding.h"

namespace ember {
namespace {

int64_t lev_budget(const EmbeddingContext& c) {
  return lev_parameter_count(c.vocab_size, c.d_model, c.config.get<LevConfig>());
}

MlpEmbeddingShape flat_shape(const EmbeddingContext& c) {
  return flat_mlp_shape(c.config.get<FlatMlpConfig>(), c.vocab_size, c.d_model, lev_budget(c));
}

MlpEmbeddingShape factored_shape(const EmbeddingContext& c) {
  return factored_mlp_shape(c.config.get<FactoredMlpConfig>(), c.config.get<LevConfig>(), c.vocab_size, c.d_model,
                            lev_budget(c));
}

// The registry: one row per kind. A new kind is one file pair and one row here.
std::vector<EmbeddingKind> build_embedding_table() {
  return {
      {.name = "tied",
       .description = "a V x D table, shared with the output head",
       .make =
           [](const EmbeddingContext& c) {
             return std::make_shared<TableEmbedding>(c.vocab_size, c.d_model, c.init_std, true);
           }},
      {.name = "untied",
       .description = "a V x D input table and a separate dense V x D output head",
       .make =
           [](const EmbeddingContext& c) {
             return std::make_shared<TableEmbedding>(c.vocab_size, c.d_model, c.init_std, false);
           }},
      {.name = "albert",
       .description = "ALBERT factorisation A[i] P (V x m, m x D) sized to P_LEV; dense head",
       .default_options = default_kind_options<AlbertConfig>,
       .reads = {"lev"},  // sized to P_LEV of the lev section
       .make =
           [](const EmbeddingContext& c) {
             const int64_t m = albert_dim(c.config.get<AlbertConfig>(), c.vocab_size, c.d_model, lev_budget(c));
             return std::make_shared<AlbertEmbedding>(c.vocab_size, c.d_model, m, c.init_std);
           },
       .budget = lev_budget,
       .budget_step = [](const EmbeddingContext& c) { return c.vocab_size + c.d_model; }},  // one more m
      {.name = "flat_mlp",
       .description = "a per-token seed through a GELU MLP, sized to P_LEV; dense head",
       .default_options = default_kind_options<FlatMlpConfig>,
       .reads = {"lev"},  // sized to P_LEV of the lev section
       .make = [](const EmbeddingContext& c) { return std::make_shared<MlpEmbedding>(flat_shape(c), c.init_std); },
       .budget = lev_budget,
       .budget_step = [](const EmbeddingContext& c) { return flat_shape(c).seed_dim + 1 + c.d_model; }},  // one more H
      {.name = "factored_mlp",
       .description = "LEV's compositional codebook seed through a GELU MLP (no spline), sized to P_LEV; dense head",
       .default_options = default_kind_options<FactoredMlpConfig>,
       .reads = {"lev"},  // sized to P_LEV of the lev section
       .make = [](const EmbeddingContext& c) { return std::make_shared<MlpEmbedding>(factored_shape(c), c.init_std); },
       .budget = lev_budget,
       .budget_step = [](const EmbeddingContext& c) { return factored_shape(c).seed_dim + 1 + c.d_model; }},
      {.name = "lev",
       .description = "LEV generator (Leviathan): codebooks -> per-head B-spline rank-r product; dense head",
       .default_options = default_kind_options<LevConfig>,
       .make =
           [](const EmbeddingContext& c) {
             return std::make_shared<LevEmbedding>(c.vocab_size, c.d_model, c.config.get<LevConfig>());
           },
       .budget = lev_budget},
  };
}

}  // namespace

const std::vector<EmbeddingKind>& embedding_kinds() {
  static const std::vector<EmbeddingKind> table = build_embedding_table();
  return table;
}

std::vector<std::string> embedding_kind_names() { return kind_names(embedding_kinds()); }
KindSections embedding_kind_options() { return kind_default_options(embedding_kinds()); }
std::vector<std::string> embedding_sections_used(const std::string& kind) {
  return kind_sections_used(embedding_kinds(), kind);
}
const EmbeddingKind& embedding_kind(const std::string& name) {
  return find_kind(embedding_kinds(), name, "model.embedding.kind");
}

void check_token_ids(const at::Tensor& ids, int64_t vocab, const std::string& what) {
  if (ids.numel() == 0 || ids.is_meta()) return;
  if (ids.is_cpu()) {  // read in place: host memory already, no ATen op and no sync to count
    const auto flat = ids.to(at::kLong).contiguous();
    const int64_t* first = flat.const_data_ptr<int64_t>();
    const auto [lo, hi] = std::minmax_element(first, first + flat.numel());
    const int64_t low = *lo, high = *hi;
    if (low < 0 || high >= vocab)
      throw IndexError(fmt::format("{}: token id {} is out of range: ids must be in [0, {}) (model.vocab_size)", what,
                                   low < 0 ? low : high, vocab));
    return;
  }
  at::_assert_async(at::logical_and(ids.ge(0), ids.lt(vocab)).all(),
                    fmt::format("{}: a token id is out of range [0, {}) (model.vocab_size)", what, vocab));
}

// The residual stream starts in fp32 under autocast whatever the kind: a lookup gives fp32 rows, but
// a kind that embeds through a matmul (albert, flat_mlp, factored_mlp) gives autocast's type, which
// would make every residual add a bf16 one and take the norms off their fused pass (kernels/rms_norm.h).
at::Tensor Embedding::forward(const at::Tensor& ids) {
  check_token_ids(ids, vocab_size(), "embedding");
  auto x = embed(ids);
  if (autocast_enabled(x.device()) && x.scalar_type() == autocast_dtype(x.device())) return x.to(at::kFloat);
  return x;
}

at::Tensor Embedding::materialize(int64_t chunk) {
  torch::NoGradGuard no_grad;
  const auto params = parameters();
  const auto device = params.empty() ? at::Device(at::kCPU) : params.front().device();
  std::vector<at::Tensor> parts;
  for (int64_t start = 0; start < vocab_size(); start += chunk) {
    auto ids = at::arange(start, std::min(start + chunk, vocab_size()), at::TensorOptions(at::kLong).device(device));
    parts.push_back(forward(ids.unsqueeze(0)).squeeze(0).to(at::kFloat));
  }
  return at::cat(parts, 0);
}

std::shared_ptr<Embedding> make_embedding(const EmbeddingContext& ctx) {
  return embedding_kind(ctx.config.kind).make(ctx);
}

std::shared_ptr<Embedding> make_embedding(const ModelConfig& cfg) {
  return make_embedding(EmbeddingContext{cfg.vocab_size, cfg.d_model, cfg.init_std, cfg.embedding});
}

std::optional<EmbeddingBudget> embedding_budget(const ModelConfig& cfg) {
  const auto& kind = embedding_kind(cfg.embedding.kind);
  if (!kind.budget) return std::nullopt;
  const EmbeddingContext ctx{cfg.vocab_size, cfg.d_model, cfg.init_std, cfg.embedding};
  return EmbeddingBudget{kind.budget(ctx), kind.budget_step ? kind.budget_step(ctx) : 1};
}

}  // namespace ember
