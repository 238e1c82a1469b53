// What a stateful part of a run saves: tensors and/or a JSON object. Each component (model,
// optimizer, loader, RNG, train state; later an EMA) saves and restores itself through `Stateful`,
// so the checkpoint code loops over components and a new one plugs in without changes there.
#pragma once
#include <nlohmann/json.hpp>

#include <string>

#include "ember/io/safetensors.h"

namespace ember {

struct ComponentState {
  TensorMap tensors;    // a checkpoint keeps them in <component>.safetensors (when any)
  nlohmann::json json;  // and this in state.json under the component's name (when not null)
};

// Who holds a component's state in a job of several ranks (run/checkpoint_writer.h): every rank the
// same (rank 0 writes `<name>`), or each rank its own part (every rank writes `<name>_shard_<r>`,
// and a load merges them, whatever the world size: ZeRO-1's optimizer).
enum class StateScope { shared, per_rank };

class Stateful {
 public:
  virtual ~Stateful() = default;
  virtual StateScope scope() const { return StateScope::shared; }
  virtual ComponentState save_state() const = 0;
  // `where` names the checkpoint in errors (e.g. "checkpoint 'runs/x/checkpoints/step_20'").
  virtual void load_state(const ComponentState& state, const std::string& where) = 0;
};

}  // namespace ember
