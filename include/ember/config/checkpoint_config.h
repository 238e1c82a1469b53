// checkpoint.* keys.
#pragma once
#include <cstdint>

#include "ember/config/fields.h"

namespace ember {

struct CheckpointConfig {
  int64_t every = 100;  // steps between checkpoints (0: only at the end and on preemption)
  int64_t keep = 3;     // newest complete checkpoints kept

  void fields(FieldVisitor& v) {
    v.field("every", every, Bound::non_negative());
    v.field("keep", keep, Bound::positive());
  }
};

}  // namespace ember
