#include "ember/model/mlp.h"

namespace ember {

SwiGLU::SwiGLU(int64_t d_model, int64_t d_ff, double init_std, double out_std) {
  w_gate_ = register_parameter("w_gate", at::empty({d_ff, d_model}).normal_(0.0, init_std));
  w_up_ = register_parameter("w_up", at::empty({d_ff, d_model}).normal_(0.0, init_std));
  w_down_ = register_parameter("w_down", at::empty({d_model, d_ff}).normal_(0.0, out_std));
}

at::Tensor SwiGLU::forward(const at::Tensor& x) {
  return at::linear(at::silu(at::linear(x, w_gate_)) * at::linear(x, w_up_), w_down_);
}

}  // namespace ember
