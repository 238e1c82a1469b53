#include "ember/train/adamw.h"

#include <optional>

#include "ember/util/error.h"

namespace ember {

namespace {

// Biases, norm gains and the knot scale are not weights to shrink, whatever their rank (Titans'
// per-head gate biases b_gates [3, H], LEV's per-head LayerNorm ln_weight / ln_bias [h, d_s]).
bool is_bias_or_norm(const std::string& name) {
  const std::string leaf = name.substr(name.rfind('.') + 1);  // the whole name when it has no '.'
  return leaf.ends_with("bias") || leaf.starts_with("b_") || leaf.starts_with("ln_") || leaf == "knot_scale" ||
         name.find("norm") != std::string::npos;
}

}  // namespace

bool parameter_decays(const std::string& name, const at::Tensor& p, bool decay_embeddings) {
  if (p.dim() < 2 || is_bias_or_norm(name)) return false;  // norm gains, biases, scalars
  if (name.rfind("embedding.", 0) == 0) return decay_embeddings;
  return true;
}

AdamW::AdamW(const NamedParameters& params, const OptimConfig& cfg, StateScope scope) : cfg_(cfg), scope_(scope) {
  for (const auto& [name, p] : params)  // the fused kernel wants the step counters on the parameters' device
    slots_.push_back({name, p, at::zeros_like(p), at::zeros_like(p), at::zeros({}, p.options().dtype(at::kFloat)),
                      parameter_decays(name, p, cfg.decay_embeddings)});
  const auto device = params.empty() ? at::Device(at::kCPU) : params.front().second.device();
  steps_ = at::zeros({}, at::TensorOptions().dtype(at::kLong).device(device));
}

void AdamW::step(double lr, double grad_scale) {
  std::optional<at::Tensor> divisor;  // the kernel divides each gradient by it
  if (grad_scale != 1.0) divisor = at::full({}, 1.0 / grad_scale, steps_.options().dtype(at::kFloat));
  fused_step(lr, divisor, std::nullopt);
}

void AdamW::step(double lr, const at::Tensor& grad_divisor, const at::Tensor& found_inf) {
  fused_step(lr, grad_divisor, found_inf);
}

int64_t AdamW::steps() const { return steps_.item<int64_t>(); }

void AdamW::fused_step(double lr, const std::optional<at::Tensor>& divisor, const std::optional<at::Tensor>& found_inf) {
  at::NoGradGuard no_grad;
  // The fused kernel reads the already-incremented step; a skipped step (found_inf 1) adds nothing.
  const auto taken = found_inf ? 1.0 - *found_inf : at::ones({}, steps_.options().dtype(at::kFloat));
  for (bool decay : {true, false}) {
    std::vector<at::Tensor> p, g, m, v, s;
    for (auto& slot : slots_) {
      if (slot.decay != decay || !slot.param.grad().defined()) continue;
      p.push_back(slot.param), g.push_back(slot.param.grad());
      m.push_back(slot.exp_avg), v.push_back(slot.exp_avg_sq), s.push_back(slot.step);
    }
    if (p.empty()) continue;
    at::_foreach_add_(s, taken);
    at::_fused_adamw_(p, g, m, v, {}, s, lr, cfg_.beta1, cfg_.beta2, decay ? cfg_.weight_decay : 0.0, cfg_.eps, false,
                      false, divisor, found_inf);
  }
  steps_.add_(taken.to(steps_.device(), at::kLong));  // a rank owning no parameter keeps its count on the CPU
}

void AdamW::zero_grad() {
  for (auto& slot : slots_) slot.param.mutable_grad() = at::Tensor();
}

TensorMap AdamW::state_tensors() const {
  TensorMap out;
  for (const auto& slot : slots_) {
    out["exp_avg/" + slot.name] = slot.exp_avg;
    out["exp_avg_sq/" + slot.name] = slot.exp_avg_sq;
    out["step/" + slot.name] = slot.step;
  }
  out["__steps__"] = steps_;
  return out;
}

void AdamW::load_state_tensors(const TensorMap& state, const std::string& where) {
  auto get = [&](const std::string& key, const at::Tensor& like) {
    auto it = state.find(key);
    if (it == state.end()) throw CheckpointError(where + ": optimizer state lacks '" + key + "'");
    if (it->second.sizes() != like.sizes())
      throw CheckpointError(where + ": optimizer state '" + key + "' has the wrong shape");
    return it->second;
  };
  at::NoGradGuard no_grad;
  for (auto& slot : slots_) {
    slot.exp_avg.copy_(get("exp_avg/" + slot.name, slot.exp_avg));
    slot.exp_avg_sq.copy_(get("exp_avg_sq/" + slot.name, slot.exp_avg_sq));
    slot.step.copy_(get("step/" + slot.name, slot.step));
  }
  steps_.copy_(get("__steps__", steps_));
}

namespace {

std::vector<at::Tensor> defined_grads(const std::vector<at::Tensor>& params) {
  std::vector<at::Tensor> grads;
  for (const auto& p : params)
    if (p.grad().defined()) grads.push_back(p.grad());
  return grads;
}

}  // namespace

at::Tensor global_grad_norm_tensor(const std::vector<at::Tensor>& params) {
  auto grads = defined_grads(params);
  if (grads.empty()) return at::zeros({}, at::kDouble);
  at::NoGradGuard no_grad;
  return at::stack(at::_foreach_norm(grads, 2, at::kFloat)).to(at::kDouble).norm();
}

double global_grad_norm(const std::vector<at::Tensor>& params) {
  return global_grad_norm_tensor(params).item<double>();
}

double clip_coefficient(double total, double max_norm) {
  return max_norm > 0.0 && std::isfinite(total) && total > max_norm ? max_norm / (total + 1e-6) : 1.0;
}

at::Tensor clip_divisor(const at::Tensor& total, double max_norm) {
  const auto one = at::ones({}, total.options());
  if (!(max_norm > 0.0)) return one.to(at::kFloat);
  // As clip_coefficient, in double on the device: (total + 1e-6) / max_norm where that clips.
  const auto clips = at::isfinite(total).logical_and_(total > max_norm);
  return at::where(clips, (total + 1e-6) / max_norm, one).to(at::kFloat);
}

double clip_grad_norm(const std::vector<at::Tensor>& params, double max_norm) {
  const double total = global_grad_norm(params);
  const double coefficient = clip_coefficient(total, max_norm);
  if (coefficient != 1.0) {
    at::NoGradGuard no_grad;
    at::_foreach_mul_(defined_grads(params), coefficient);
  }
  return total;
}

}  // namespace ember
