// The single source of truth for resume, saved as state.json beside the weights.
#pragma once
#include <nlohmann/json.hpp>

#include <string>

#include "ember/data/loader.h"

namespace ember {

struct TrainState {
  int64_t step = 0;          // optimizer steps completed
  int64_t tokens_seen = 0;
  int64_t skipped_steps = 0; // non-finite steps skipped (train.on_nonfinite = skip)
  LoaderState loader;
  std::string next_shard;    // informational: where the next batch starts
  int64_t next_position = 0;
  std::string rng_state;     // LibTorch CPU generator state, hex
  std::string config_hash;
  std::string model_hash;    // sha256 of the model section: resume refuses a different model
  double elapsed_s = 0.0;

  nlohmann::json to_json() const;
  static TrainState from_json(const nlohmann::json& j, const std::string& where);
};

std::string cpu_rng_state_hex();
void restore_cpu_rng_state(const std::string& hex);

}  // namespace ember
