#include "ember/train/lr_schedule.h"

#include <algorithm>
#include <cmath>

namespace ember {

double learning_rate(const OptimConfig& cfg, int64_t step, int64_t total_steps) {
  const double peak = cfg.lr, floor = cfg.min_lr;
  if (step < cfg.warmup_steps) return peak * static_cast<double>(step + 1) / cfg.warmup_steps;
  const int64_t decay_span = std::max<int64_t>(1, total_steps - 1 - cfg.warmup_steps);
  const double t = std::clamp(static_cast<double>(step - cfg.warmup_steps) / decay_span, 0.0, 1.0);
  switch (cfg.schedule) {
    case LrSchedule::constant: return peak;
    case LrSchedule::linear: return peak + (floor - peak) * t;
    case LrSchedule::cosine: return floor + (peak - floor) * 0.5 * (1.0 + std::cos(M_PI * t));
    case LrSchedule::wsd: break;
  }
  // wsd: stable at peak, then linear decay over the last round(decay_fraction x steps) steps,
  // reaching min_lr at the last step.
  if (cfg.decay_fraction == 0.0) return peak;
  const int64_t decay_steps = std::max<int64_t>(1, std::llround(cfg.decay_fraction * static_cast<double>(total_steps)));
  const int64_t decay_begin = std::max(cfg.warmup_steps, total_steps - decay_steps);
  if (step < decay_begin) return peak;
  const double f = static_cast<double>(step - decay_begin + 1) / static_cast<double>(total_steps - decay_begin);
  return peak + (floor - peak) * std::min(1.0, f);
}

}  // namespace ember
