// eval.* keys: periodic validation during training and `ember eval`.
#pragma once
#include <cstdint>

#include "ember/config/fields.h"

namespace ember {

struct EvalConfig {
  int64_t every = 100;  // steps between validations (0: only at the end)
  int64_t batches = 8;  // validation batches of micro_batch x seq_len (0: the whole split)

  void fields(FieldVisitor& v) {
    v.field("every", every, Bound::non_negative());
    v.field("batches", batches, Bound::non_negative());
  }
};

}  // namespace ember
