// AdamW with decay / no-decay groups (no decay on norm gains, biases and other 1-D parameters,
// whatever their rank, nor on embeddings unless optim.decay_embeddings), one fused pass per group (ATen's
// _fused_adamw_). Decoupled decay: p <- p (1 - lr wd) - lr m_hat / (sqrt(v_hat) + eps).
#pragma once
#include <ATen/ATen.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ember/config/optim_config.h"
#include "ember/io/component_state.h"

namespace ember {

using NamedParameters = std::vector<std::pair<std::string, at::Tensor>>;

bool parameter_decays(const std::string& name, const at::Tensor& p, bool decay_embeddings);

// A checkpoint component: its moments and step counts (optim.safetensors), or with ZeRO-1 the
// moments of this rank's parameters only (scope per_rank: optim_shard_<r>.safetensors).
class AdamW final : public Stateful {
 public:
  AdamW(const NamedParameters& params, const OptimConfig& cfg, StateScope scope = StateScope::shared);
  StateScope scope() const override { return scope_; }
  // Parameters without a gradient are left alone. The gradients are multiplied by grad_scale inside
  // the fused pass (clipping without a pass of its own over every gradient).
  void step(double lr, double grad_scale = 1.0);
  // The same without reading anything back from the device: the fused pass divides every gradient
  // by `grad_divisor` (a float scalar on the parameters' device) and leaves parameters, moments and
  // step counts alone where `found_inf` (float, 0 or 1, same device) is 1: a non-finite step skipped.
  void step(double lr, const at::Tensor& grad_divisor, const at::Tensor& found_inf);
  void zero_grad();  // gradients set to none (no zero-fill pass)
  int64_t steps() const;  // the steps taken, skipped ones not counted (reads the device)

  TensorMap state_tensors() const;  // "exp_avg/<name>", "exp_avg_sq/<name>", "step/<name>"
  void load_state_tensors(const TensorMap& state, const std::string& where);
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
  void fused_step(double lr, const std::optional<at::Tensor>& divisor, const std::optional<at::Tensor>& found_inf);
  OptimConfig cfg_;
  StateScope scope_;
  std::vector<Slot> slots_;
  at::Tensor steps_;  // int64 on the parameters' device, so that a skip is counted without a sync
};

// Global L2 norm of all gradients (0 when none has one).
double global_grad_norm(const std::vector<at::Tensor>& params);
// The same as a double scalar on the gradients' device (CPU when none has one), nothing read back.
at::Tensor global_grad_norm_tensor(const std::vector<at::Tensor>& params);
// The factor that brings a gradient of norm `total` down to max_norm: 1 when it is not larger, or
// max_norm is 0 (no clipping), or the norm is not finite.
double clip_coefficient(double total, double max_norm);
// 1 / clip_coefficient as a float scalar on the norm's device (what AdamW::step divides by).
at::Tensor clip_divisor(const at::Tensor& total, double max_norm);
// Global L2 norm of all gradients; scales them down to max_norm when larger (max_norm 0: never).
double clip_grad_norm(const std::vector<at::Tensor>& params, double max_norm);

}  // namespace ember
