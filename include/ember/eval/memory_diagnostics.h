// How a trained Titans memory behaves along a sequence (docs/mixers.md, "Titans over long
// contexts"): per layer and chunk, the memory weights' size against their learned initial values,
// the memory's contribution to what a query reads, ||M_t(q) - q|| / ||q|| (M(z) = z + SiLU(z W1)
// W2: 0 when the memory has decayed to W = 0, where its inner gradient vanishes), and the mean
// gates; and the forget gate's bias per head. `ember analyze memory` prints it.
#pragma once
#include <vector>

#include "ember/data/loader.h"
#include "ember/model/lm.h"
#include "ember/model/mixer_memory.h"

namespace ember {

struct MemoryLayer {
  int64_t layer = 0;
  std::vector<double> alpha_bias;  // per head; initialised to model.mixer.titans.alpha_bias
  std::vector<MemoryChunk> chunks;
};

struct MemoryDiagnostics {
  std::vector<MemoryLayer> layers;
  int64_t sequences = 0, seq_len = 0;
};

// Throws UsageError when no layer's mixer writes a memory (Mixer::memory(): titans does). Averages over `batches` batches.
MemoryDiagnostics memory_diagnostics(LanguageModel& model, BatchLoader& loader, int64_t batches);

}  // namespace ember
