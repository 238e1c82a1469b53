// data.* keys: where the token shards are.
#pragma once
#include <string>
#include <vector>

#include "ember/config/fields.h"

namespace ember {

struct DataConfig {
  // Shard files, directories (every *.bin inside) or glob patterns; relative paths are taken
  // from the current directory (a run's config.yaml holds them absolute: run/run_data.h).
  std::vector<std::string> train;
  std::vector<std::string> val;

  void fields(FieldVisitor& v) {
    v.field("train", train);
    v.field("val", val);
  }
};

}  // namespace ember
