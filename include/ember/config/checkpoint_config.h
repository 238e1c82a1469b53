// checkpoint.* keys.
#pragma once
#include <cstdint>

#include "ember/config/fields.h"

namespace ember {

struct CheckpointConfig {
  int64_t every = 100;  // steps between checkpoints (0: only at the end and on preemption)
  int64_t keep = 3;     // newest complete checkpoints kept
  bool final = true;    // one when training ends; false for throughput probes (preemption still saves)

  void fields(FieldVisitor& v) {
    v.field("every", every, Bound::non_negative());
    v.field("keep", keep, Bound::positive());
    v.field("final", final);
  }
};

}  // namespace ember
