// eval.* keys: periodic validation during training and `ember eval`.
#pragma once
#include <cstdint>
#include <limits>

#include "ember/config/fields.h"

namespace ember {

struct EvalConfig {
  int64_t every = 100;  // steps between validations (0: only at the end)
  int64_t batches = 8;  // validation batches of micro_batch x seq_len (0: the whole split)
  // Geometry during training: every N steps the sampled epsilon (docs/capacity.md) of the input
  // embedding (materialised for generated kinds) and of the output head go to the metrics (0: off).
  int64_t capacity_every = 0;
  int64_t capacity_pairs = 200000;  // random pairs per estimate

  void fields(FieldVisitor& v) {
    v.field("every", every, Bound::non_negative());
    v.field("batches", batches, Bound::non_negative());
    v.field("capacity_every", capacity_every, Bound::non_negative());
    v.field("capacity_pairs", capacity_pairs, Bound{2.0, std::numeric_limits<double>::infinity(), false, ">= 2"});
  }
};

}  // namespace ember
