// Attention diagnostics of a trained model (docs/mixers.md, gated attention): per layer, the mean gate of
// gated attention (trained models drive it far below its initial 0.5) and the attention sink,
// the share of attention on the first token, averaged over heads, sequences and query positions
// t >= 1 (position 0 can only attend to itself). The paper reports 46.7% -> 4.8% with gating.
#pragma once
#include <vector>

#include "ember/data/loader.h"
#include "ember/model/lm.h"

namespace ember {

struct LayerAttention {
  int64_t layer = 0;
  bool gated = false;
  double mean_gate = 0.0;         // only when gated
  double first_token_mass = 0.0;  // mean P[t, 0] over t >= 1
};

struct AttentionDiagnostics {
  std::vector<LayerAttention> layers;
  int64_t tokens = 0;
};

// Throws UsageError when the model's mixer is not (gated) attention.
// Over `batches` batches from the loader's start, never more than one pass over its windows.
AttentionDiagnostics attention_diagnostics(LanguageModel& model, BatchLoader& loader, int64_t batches);

}  // namespace ember
