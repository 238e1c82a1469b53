// What each training step leaves on the device (its loss, gradient norm and whether it was
// skipped as non-finite), read back by the host only when asked: on log steps, before a
// checkpoint, at the end. A step then queues its work without waiting for the device; one copy
// reads every step since the last read (docs/usage.md, "Profiling a run").
#pragma once
#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

namespace ember {

struct StepOutcome {
  int64_t step = 0;
  double loss = 0.0, grad_norm = 0.0;
  bool finite = true;  // false: the optimizer skipped the step
};

class PendingOutcomes {
 public:
  // loss, grad_norm: scalars on the device (any floating dtype); nonfinite: 1 where skipped, else 0.
  void add(int64_t step, const at::Tensor& loss, const at::Tensor& grad_norm, const at::Tensor& nonfinite);
  bool empty() const { return pending_.empty(); }
  // The pending steps in order, read in one device-to-host copy; none pending afterwards.
  std::vector<StepOutcome> take();

 private:
  std::vector<int64_t> steps_;
  std::vector<at::Tensor> pending_;  // [3] double each: loss, grad norm, non-finite flag
};

// 1 (float) where the loss or the gradient norm is not finite, else 0: found_inf of the fused AdamW.
at::Tensor nonfinite_flag(const at::Tensor& loss, const at::Tensor& grad_norm);

}  // namespace ember
