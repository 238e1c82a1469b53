// AdamW with decay / no-decay groups (no decay on norm gains, biases and other 1-D parameters,
// whatever their rank, nor on embeddings unless optim.decay_embeddings), one fused pass per group (ATen's
// _fused_adamw_). Decoupled decay: p <- p (1 - lr wd) - lr m_hat / (sqrt(v_hat) + eps).
#pragma once
#include <ATen/ATen.h>

#include <string>
#include <utility>
#include <vector>

#include "ember/config/optim_config.h"
#include "ember/io/component_state.h"

namespace ember {

using NamedParameters = std::vector<std::pair<std::string, at::Tensor>>;

bool parameter_decays(const std::string& name, const at::Tensor& p, bool decay_embeddings);

// A checkpoint component: its moments and step counts (optim.safetensors).
class AdamW final : public Stateful {
 public:
  AdamW(const NamedParameters& params, const OptimConfig& cfg);
  // Parameters without a gradient are left alone. The gradients are multiplied by grad_scale inside
  // the fused pass (clipping without a pass of its own over every gradient).
  void step(double lr, double grad_scale = 1.0);
  void zero_grad();  // gradients set to none (no zero-fill pass)
  int64_t steps() const { return steps_; }

  TensorMap state_tensors() const;  // "exp_avg/<name>", "exp_avg_sq/<name>", "step/<name>"
  void load_state_tensors(const TensorMap& state, const std::string& where);
  std::vector<std::string> group_names(bool decay) const;
  ComponentState save_state() const override { return {state_tensors(), nullptr}; }
  void load_state(const ComponentState& state, const std::string& where) override {
    load_state_tensors(state.tensors, where);
  }

 private:
  struct Slot {
    std::string name;
    at::Tensor param, exp_avg, exp_avg_sq, step;
    bool decay;
  };
  OptimConfig cfg_;
  std::vector<Slot> slots_;
  int64_t steps_ = 0;
};

// Global L2 norm of all gradients (0 when none has one).
double global_grad_norm(const std::vector<at::Tensor>& params);
// The factor that brings a gradient of norm `total` down to max_norm: 1 when it is not larger, or
// max_norm is 0 (no clipping), or the norm is not finite.
double clip_coefficient(double total, double max_norm);
// Global L2 norm of all gradients; scales them down to max_norm when larger (max_norm 0: never).
double clip_grad_norm(const std::vector<at::Tensor>& params, double max_norm);

}  // namespace ember
