#include "ember/model/embedding_registry.h"

#include "ember/config/kind_table.h"
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
