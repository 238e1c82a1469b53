// optim.* keys: AdamW, its parameter groups, clipping and the learning-rate schedule.
#pragma once
#include <cstdint>
#include <string>

#include "ember/config/fields.h"

namespace ember {

enum class LrSchedule { cosine, linear, constant, wsd };
inline std::span<const EnumName<LrSchedule>> enum_names(LrSchedule) {
  static constexpr EnumName<LrSchedule> names[] = {{LrSchedule::cosine, "cosine"},
                                                   {LrSchedule::linear, "linear"},
                                                   {LrSchedule::constant, "constant"},
                                                   {LrSchedule::wsd, "wsd"}};
  return names;
}

struct OptimConfig {
  double lr = 3e-3;
  double min_lr = 3e-4;
  double beta1 = 0.9;
  double beta2 = 0.95;
  double eps = 1e-8;
  double weight_decay = 0.1;
  bool decay_embeddings = false;  // norms and biases never decay
  double grad_clip = 1.0;         // global L2 norm; 0 disables
  LrSchedule schedule = LrSchedule::cosine;
  int64_t warmup_steps = 20;
  double decay_fraction = 0.2;  // wsd: share of all steps spent in the final decay

  void fields(FieldVisitor& v) {
    v.field("lr", lr, Bound::positive());
    v.field("min_lr", min_lr, Bound::non_negative());
    v.field("beta1", beta1, Bound{0.0, 1.0, false, "in [0, 1)"});
    v.field("beta2", beta2, Bound{0.0, 1.0, false, "in [0, 1)"});
    v.field("eps", eps, Bound::positive());
    v.field("weight_decay", weight_decay, Bound::non_negative());
    v.field("decay_embeddings", decay_embeddings);
    v.field("grad_clip", grad_clip, Bound::non_negative());
    v.choice("schedule", schedule);
    v.field("warmup_steps", warmup_steps, Bound::non_negative());
    v.field("decay_fraction", decay_fraction, Bound::unit());
  }
  void check(const ConfigChecker& c) const;
};

}  // namespace ember
