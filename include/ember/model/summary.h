// Parameters and FLOPs of a model config, layer by layer, counted on a shape-only (meta) instance
// of the real model: what `ember inspect` shows.
#pragma once
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "ember/model/embedding_registry.h"

namespace ember {

struct LayerSummary {
  int64_t layer = 0;
  std::string mixer;
  int64_t d_ff = 0, mixer_params = 0, mlp_params = 0, params = 0;
  double fwd_flops_per_token = 0.0;
};

struct ModelSummary {
  int64_t vocab_size = 0, d_model = 0, seq_len = 0;
  std::string embedding_kind, mixer, taper;
  std::vector<LayerSummary> layers;
  int64_t embedding_params = 0, body_params = 0, head_params = 0, total_params = 0;
  double train_flops_per_token = 0.0;         // attention scores in full (PaLM's convention, MFU's)
  double causal_train_flops_per_token = 0.0;  // causal attention's masked half left out
  std::optional<EmbeddingBudget> embedding_budget;  // what the embedding kind is sized to (P_LEV)

  // Keys: vocab_size, d_model, embedding_kind, mixer, taper, seq_len, layers[], *_params,
  // train_flops_per_token, causal_train_flops_per_token, and lev_budget_params / embedding_vs_lev / embedding_step when the
  // embedding kind is sized to a budget.
  nlohmann::json to_json() const;
};

ModelSummary summarize_model(const ModelConfig& cfg, int64_t seq_len);

}  // namespace ember
