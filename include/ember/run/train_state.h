// The training loop's own counters as a checkpoint component (state.json "train"), and the CPU
// random generator as another ("rng"). With the model, the optimizer and the loader they are all
// that resume needs.
#pragma once
#include <string>

#include "ember/io/component_state.h"

namespace ember {

struct TrainState final : Stateful {
  int64_t step = 0;  // optimizer steps completed
  int64_t tokens_seen = 0;
  int64_t skipped_steps = 0;  // non-finite steps skipped (train.on_nonfinite = skip)
  std::string config_hash;    // informational
  std::string model_hash;     // sha256 of the model section: resume refuses a different model
  double elapsed_s = 0.0;
  int64_t world = 1;  // ranks that trained the latest steps (data parallel: any world may resume)
  int64_t saved_world = 1;  // after load_state: the world of the checkpoint
  // Where the weights came from when the run did not start from its own initialisation (e.g.
  // "ember import hf DIR"); kept across checkpoints.
  std::string origin;
  // A checkpoint of weights alone (written by `ember import`): resume starts the optimizer, the data
  // order and the generator afresh.
  bool weights_only = false;
  // The path each fused op took and the key of the kernel check behind `auto` (train/kernel_setup.h);
  // null in checkpoints from before it was recorded.
  nlohmann::json kernels;

  nlohmann::json to_json() const;
  static TrainState from_json(const nlohmann::json& j, const std::string& where);
  ComponentState save_state() const override { return {{}, to_json()}; }
  // Keeps this state's config hash; refuses a checkpoint of a different model (model_hash).
  void load_state(const ComponentState& state, const std::string& where) override;
};

// The default CPU generator's state (hex of its bytes).
struct CpuRngState final : Stateful {
  ComponentState save_state() const override;
  void load_state(const ComponentState& state, const std::string& where) override;
};

std::string cpu_rng_state_hex();
void restore_cpu_rng_state(const std::string& hex);

}  // namespace ember
