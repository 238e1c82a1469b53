// The input-embedding seam's registry: model.embedding.kind picks a row of the table in
// src/model/embedding_registry.cpp (kind -> description, options section, factory), which builds
// the kind's Embedding (model/embedding.h) from the chassis sizes and its own section,
// model.embedding.<kind>.*.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ember/model/embedding.h"

namespace ember {

struct EmbeddingKind {
  std::string name;
  std::string description;                                             // one line, for --help, inspect and errors
  std::function<std::unique_ptr<KindOptions>()> default_options = {};  // empty: the kind has no options
  std::vector<std::string> reads = {};  // other kinds whose sections it reads (albert: {"lev"})
  std::function<std::shared_ptr<Embedding>(const EmbeddingContext&)> make = {};
  // The input-side parameter budget the kind is sized to match (P_LEV for the generated kinds);
  // empty when the kind has no such budget.
  std::function<int64_t(const EmbeddingContext&)> budget = {};
  // How far apart the sizes the kind can take are (e.g. albert: one more m adds V + D); empty: 1.
  std::function<int64_t(const EmbeddingContext&)> budget_step = {};
};

const std::vector<EmbeddingKind>& embedding_kinds();
const EmbeddingKind& embedding_kind(const std::string& name);  // ConfigError with did-you-mean
std::shared_ptr<Embedding> make_embedding(const EmbeddingContext& ctx);
std::shared_ptr<Embedding> make_embedding(const ModelConfig& cfg);
// The budget of the configured kind and the step its size moves in, if it has a budget.
struct EmbeddingBudget {
  int64_t params = 0;
  int64_t step = 1;
};
std::optional<EmbeddingBudget> embedding_budget(const ModelConfig& cfg);

}  // namespace ember
