// Learning rate at a step: linear warmup, then cosine / linear / constant / warmup-stable-decay
// down to min_lr at the last step.
#pragma once
#include <cstdint>

#include "ember/train/optim_config.h"

namespace ember {

// step counts from 0; total_steps is train.steps.
double learning_rate(const OptimConfig& cfg, int64_t step, int64_t total_steps);

}  // namespace ember
