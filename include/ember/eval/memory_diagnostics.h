// How a trained Titans memory behaves along a sequence (docs/mixers.md, "Titans over long
// contexts"): per layer and chunk, the memory weights' size against their learned initial values,
// the memory's contribution to what a query reads, ||M_t(q) - q|| / ||q|| (M(z) = z + SiLU(z W1)
// W2: 0 when the memory has decayed to W = 0, where its inner gradient vanishes), and the mean
// gates; and the forget gate's bias per head. `ember analyze memory` prints it.
#pragma once
#include <vector>

#include "ember/data/loader.h"
#include "ember/model/lm.h"

namespace ember {

struct MemoryChunk {
  int64_t end = 0;                      // tokens of the sequence seen by the end of the chunk
  double w1_ratio = 0.0, w2_ratio = 0.0;  // ||W_t||_F / ||W_0||_F, mean over sequences and heads
  double contribution = 0.0;            // mean ||M_t(q) - q|| / ||q|| over the chunk's queries
  double theta = 0.0, eta = 0.0, alpha = 0.0;  // mean gates over the chunk
};

struct MemoryLayer {
  int64_t layer = 0;
  std::vector<double> alpha_bias;  // per head; initialised to model.mixer.titans.alpha_bias
  std::vector<MemoryChunk> chunks;
};

struct MemoryDiagnostics {
  std::vector<MemoryLayer> layers;
  int64_t sequences = 0, seq_len = 0;
};

// Throws UsageError when the model has no Titans mixer. Averages over `batches` batches.
MemoryDiagnostics memory_diagnostics(LanguageModel& model, BatchLoader& loader, int64_t batches);

}  // namespace ember
