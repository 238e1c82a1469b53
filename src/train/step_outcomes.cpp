#include "ember/train/step_outcomes.h"

namespace ember {

void PendingOutcomes::add(int64_t step, const at::Tensor& loss, const at::Tensor& grad_norm,
                          const at::Tensor& nonfinite) {
  at::NoGradGuard no_grad;
  const auto d = loss.options().dtype(at::kDouble);
  steps_.push_back(step);
  pending_.push_back(at::stack({loss.to(d), grad_norm.to(d), nonfinite.to(d)}));
}

std::vector<StepOutcome> PendingOutcomes::take() {
  std::vector<StepOutcome> out;
  if (pending_.empty()) return out;
  const auto host = at::stack(pending_).to(at::kCPU).contiguous();  // the one synchronisation
  const auto* v = host.data_ptr<double>();
  for (size_t i = 0; i < steps_.size(); ++i)
    out.push_back({steps_[i], v[3 * i], v[3 * i + 1], v[3 * i + 2] == 0.0});
  steps_.clear();
  pending_.clear();
  return out;
}

at::Tensor nonfinite_flag(const at::Tensor& loss, const at::Tensor& grad_norm) {
  const auto ok = at::isfinite(loss).logical_and_(at::isfinite(grad_norm).to(loss.device()));
  return ok.logical_not().to(at::kFloat);
}

}  // namespace ember
