// log.* keys: where the run directory is and how often to report.
#pragma once
#include <cstdint>
#include <string>

#include "ember/config/fields.h"

namespace ember {

struct LogConfig {
  std::string dir = "runs";  // run directory = dir/name
  std::string name = "run";
  int64_t every = 10;  // steps between console lines and metrics.jsonl records
  bool tensorboard = false;  // also write the metrics as TensorBoard scalars under <run>/tensorboard

  void fields(FieldVisitor& v) {
    v.field("dir", dir);
    v.field("name", name);
    v.field("every", every, Bound::positive());
    v.field("tensorboard", tensorboard);
  }
};

}  // namespace ember
