// A module's parameters and buffers as a checkpoint component, and the one place that loads them
// back: every name, shape and dtype is checked and the offending name is in the error.
#pragma once
#include <torch/nn/module.h>

#include <string>

#include "ember/io/component_state.h"

namespace ember {

// Parameters and buffers by their dotted names (what model.safetensors holds).
TensorMap module_tensors(const torch::nn::Module& module);

// Copies `tensors` into the module's parameters and buffers, converting nothing: a missing or
// unexpected name, a shape or a dtype that differs is a CheckpointError naming it and `where`.
void load_parameters(torch::nn::Module& module, const TensorMap& tensors, const std::string& where);

// The model as a checkpoint component.
class ModuleState final : public Stateful {
 public:
  explicit ModuleState(torch::nn::Module& module) : module_(module) {}
  ComponentState save_state() const override { return {module_tensors(module_), nullptr}; }
  void load_state(const ComponentState& state, const std::string& where) override {
    load_parameters(module_, state.tensors, where);
  }

 private:
  torch::nn::Module& module_;
};

}  // namespace ember
