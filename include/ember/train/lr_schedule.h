// Learning rate at a step: linear warmup, then cosine / linear / constant down to min_lr at the
// last step, or warmup-stable-decay: peak until the last round(decay_fraction x steps) steps,
// which decay linearly to min_lr.
#pragma once
#include <cstdint>

#include "ember/config/optim_config.h"

namespace ember {

// step counts from 0; total_steps is train.steps.
double learning_rate(const OptimConfig& cfg, int64_t step, int64_t total_steps);

}  // namespace ember
