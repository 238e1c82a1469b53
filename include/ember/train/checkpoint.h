// Checkpoints: run/checkpoints/step_N/{model.safetensors, optim.safetensors, state.json,
// SHA256SUMS}. Written into a temporary directory, fsynced, renamed into place; then the
// `latest` pointer is replaced atomically and all but the newest `keep` are removed. Loading
// verifies every checksum; resume falls back to the newest checkpoint that verifies.
#pragma once
#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "ember/train/safetensors.h"

namespace ember {

struct CheckpointData {
  std::filesystem::path dir;
  TensorMap model;
  TensorMap optim;
  nlohmann::json state;
};

class Checkpointer {
 public:
  Checkpointer(std::filesystem::path run_dir, int64_t keep);

  std::filesystem::path save(const CheckpointData& data, int64_t step);
  // The newest checkpoint that verifies; `warn` hears about each one skipped. nullopt if none.
  std::optional<CheckpointData> load_latest(const std::function<void(const std::string&)>& warn) const;
  std::filesystem::path checkpoints_dir() const { return run_dir_ / "checkpoints"; }

 private:
  std::vector<std::filesystem::path> complete_by_step_desc() const;
  void prune() const;

  std::filesystem::path run_dir_;
  int64_t keep_;
};

// Throws CheckpointError saying which file is missing or fails its checksum.
void verify_checkpoint(const std::filesystem::path& dir);
CheckpointData load_checkpoint(const std::filesystem::path& dir);  // verifies first
// A checkpoint directory, or a run directory (its newest valid checkpoint).
CheckpointData load_checkpoint_or_run(const std::filesystem::path& path);

}  // namespace ember
