// Residual alignment (docs/tapered.md, "Mechanism"): per layer, the mean over tokens of
// rho_l = cos(MLP_l output, residual stream h_l it is added to), and the same for the mixer.
// Late MLPs with rho near 1 reinforce what the stream already holds rather than write new
// directions.
#pragma once
#include <vector>

#include "ember/data/loader.h"
#include "ember/model/lm.h"

namespace ember {

struct LayerAlignment {
  int64_t layer = 0;
  double mixer_cos = 0.0;  // mean cos(Mixer_l output, x_l)
  double mlp_cos = 0.0;    // mean cos(MLP_l output, h_l)
};

struct AlignmentResult {
  std::vector<LayerAlignment> layers;
  int64_t tokens = 0;
};

// Over `batches` batches from the loader's start, never more than one pass over its windows.
AlignmentResult residual_alignment(LanguageModel& model, BatchLoader& loader, int64_t batches);

}  // namespace ember
