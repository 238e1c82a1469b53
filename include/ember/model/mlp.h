// SwiGLU MLP: (SiLU(x W_gate) * (x W_up)) W_down, no biases (docs/mixers.md, the chassis); the gate
// and up projections as one GEMM (kernels/projections.h), the gate as one kernel (kernels/swiglu.h).
// Parameters 3 d d_ff: the width d_ff is per layer (the taper seam).
#pragma once
#include <torch/nn/module.h>

namespace ember {

at::Tensor silu_derivative(const at::Tensor& h);  // d/dh h sigmoid(h)

class SwiGLU : public torch::nn::Module {
 public:
  SwiGLU(int64_t d_model, int64_t d_ff, double init_std, double out_std);
  at::Tensor forward(const at::Tensor& x) const;
  int64_t d_ff() const { return w_up_.size(0); }
  const at::Tensor& w_gate() const { return w_gate_; }  // [d_ff, d]
  const at::Tensor& w_up() const { return w_up_; }      // [d_ff, d]
  const at::Tensor& w_down() const { return w_down_; }  // [d, d_ff]
  // Kept for backward per token: the input (of `input_elem` bytes) as the gate and up projections
  // keep it, what the gate keeps (kernels/swiglu.h) and the down projection's input, the gate's output.
  double activation_bytes_per_token(int64_t elem, int64_t input_elem) const;

 private:
  at::Tensor w_gate_, w_up_, w_down_;
};

}  // namespace ember
