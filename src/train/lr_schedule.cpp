#include "ember/train/lr_schedule.h"

#include <algorithm>
#include <cmath>

namespace ember {

double learning_rate(const OptimConfig& cfg, int64_t step, int64_t total_steps) {
  const double peak = cfg.lr, floor = cfg.min_lr;
  if (step < cfg.warmup_steps) return peak * static_cast<double>(step + 1) / cfg.warmup_steps;
  const int64_t decay_span = std::max<int64_t>(1, total_steps - 1 - cfg.warmup_steps);
  const double t = std::clamp(static_cast<double>(step - cfg.warmup_steps) / decay_span, 0.0, 1.0);
  if (cfg.schedule == "constant") return peak;
  if (cfg.schedule == "linear") return peak + (floor - peak) * t;
  if (cfg.schedule == "cosine") return floor + (peak - floor) * 0.5 * (1.0 + std::cos(M_PI * t));
  // wsd: stable at peak, then linear decay over the last decay_fraction of all steps.
  const double decay_start = 1.0 - cfg.decay_fraction;
  if (t <= decay_start || cfg.decay_fraction == 0.0) return peak;
  return peak + (floor - peak) * (t - decay_start) / cfg.decay_fraction;
}

}  // namespace ember
