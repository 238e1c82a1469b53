#include "ember/model/mlp.h"

#include "kernels/projections.h"
#include "ember/model/init.h"
#include "ember/kernels/kernel_choice.h"
#include "kernels/swiglu.h"

namespace ember {

at::Tensor silu_derivative(const at::Tensor& h) {
  auto s = at::sigmoid(h);
  return s * (1 + h * (1 - s));
}

double SwiGLU::activation_bytes_per_token(int64_t elem, int64_t input_elem) const {
  const bool fused = kernels::path(kernels::Op::swiglu) != kernels::Path::aten;
  const int64_t input = projections::saved_bytes_per_row(w_up_.size(1), input_elem, elem, 2, projections::stacked_in_estimate());
  return static_cast<double>(input + swiglu::saved_bytes_per_row(d_ff(), elem, fused) +
                             projections::saved_bytes_per_row(d_ff(), elem, elem, 1, false));
}

SwiGLU::SwiGLU(int64_t d_model, int64_t d_ff, double init_std, double out_std) {
  w_gate_ = register_parameter("w_gate", normal_parameter({d_ff, d_model}, init_std));
  w_up_ = register_parameter("w_up", normal_parameter({d_ff, d_model}, init_std));
  w_down_ = register_parameter("w_down", normal_parameter({d_model, d_ff}, out_std));
}

at::Tensor SwiGLU::forward(const at::Tensor& x) const {
  if (projections::stacks(x))  // one GEMM, x [W_gate; W_up]^T, and the gate's gradient one buffer
    return at::linear(swiglu::gate_stacked(projections::stacked(x, {w_gate_, w_up_})), w_down_);
  return at::linear(swiglu::gate(at::linear(x, w_gate_), at::linear(x, w_up_)), w_down_);
}

}  // namespace ember
