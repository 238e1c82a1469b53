// Checkpoints: run/checkpoints/step_N/ holds one <component>.safetensors per component with
// tensors (model.safetensors, optim.safetensors, ...), state.json with each component's JSON under
// its name, and SHA256SUMS. Written into a temporary directory, fsynced, renamed into place; then
// the `latest` pointer is replaced atomically and all but the newest `keep` are removed. Loading
// verifies the checksums of what it reads; resume falls back to the newest checkpoint that verifies.
#pragma once
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ember/io/component_state.h"

namespace ember {

using NamedComponents = std::vector<std::pair<std::string, Stateful*>>;

inline constexpr const char* kTensorExt = ".safetensors";  // a component's tensors: <name>.safetensors
// The file stem of rank `rank`'s part of a per-rank component (io/component_state.h): <name>_shard_<rank>.
std::string component_shard(const std::string& name, int rank);

struct CheckpointData {
  std::filesystem::path dir;
  std::map<std::string, ComponentState> components;
  int64_t step = 0;  // from the directory name

  std::string where() const { return "checkpoint '" + dir.string() + "'"; }
  // The state of a component; a CheckpointError naming the checkpoint when it is absent.
  const ComponentState& component(const std::string& name) const;
  // The same with the shards <name>_shard_<r> of a per-rank component merged in (their tensors
  // are keyed by what they belong to, e.g. a parameter's name, so any world size reads them).
  ComponentState merged(const std::string& name) const;
};

// The states of `components` (those of `scope` only, when given), to save.
std::map<std::string, ComponentState> save_components(const NamedComponents& components,
                                                      std::optional<StateScope> scope = std::nullopt);
// Restores each component in order, from its merged state; a component the checkpoint lacks is a
// CheckpointError.
void restore_components(const CheckpointData& data, const NamedComponents& components);

class Checkpointer {
 public:
  Checkpointer(std::filesystem::path run_dir, int64_t keep);

  std::filesystem::path save(const std::map<std::string, ComponentState>& components, int64_t step);
  // The same in three parts, for components written by several processes (run/checkpoint_writer.h):
  // begin() makes an empty staging directory, write_tensors() puts one component's tensors there
  // (any process), seal() writes the rest, SHA256SUMS over every staged file, renames it into
  // place and moves `latest`. Call seal() only when every writer has finished.
  std::filesystem::path begin(int64_t step) const;
  std::filesystem::path staging_dir(int64_t step) const;
  static void write_tensors(const std::filesystem::path& staging, const std::string& name, const ComponentState& state);
  std::filesystem::path seal(const std::filesystem::path& staging,
                             const std::map<std::string, ComponentState>& components, int64_t step);
  // The newest checkpoint that verifies; `warn` hears about each one skipped. nullopt if none.
  std::optional<CheckpointData> load_latest(const std::function<void(const std::string&)>& warn) const;
  std::filesystem::path checkpoints_dir() const { return run_dir_ / "checkpoints"; }

 private:
  void prune() const;

  std::filesystem::path run_dir_;
  int64_t keep_;
};

// Complete checkpoint directories of a run, newest first.
std::vector<std::filesystem::path> checkpoints_newest_first(const std::filesystem::path& run_dir);
// Throws CheckpointError saying which file is missing or fails its checksum. `files` empty: all
// files SHA256SUMS lists; else only those (state.json is always checked).
void verify_checkpoint(const std::filesystem::path& dir, const std::vector<std::string>& files = {});
// Verifies first. `tensor_components` empty: every component's tensors; else only those (e.g.
// {"model"} for evaluation, which has no use for the optimizer state).
CheckpointData load_checkpoint(const std::filesystem::path& dir,
                               const std::vector<std::string>& tensor_components = {});
// A checkpoint directory, or a run directory (its newest valid checkpoint).
CheckpointData load_checkpoint_or_run(const std::filesystem::path& path,
                                      const std::vector<std::string>& tensor_components = {});
// The run directory a checkpoint directory belongs to (run/checkpoints/step_N).
std::filesystem::path run_dir_of_checkpoint(const std::filesystem::path& checkpoint_dir);

}  // namespace ember
