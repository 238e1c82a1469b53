// RMSNorm(x) = x / sqrt(mean_j x_j^2 + eps) * g   (docs/mixers.md, the chassis), gain init 1, no bias:
// the gain and the calls of the op (kernels/rms_norm.h: one fused pass forward and one backward
// wherever the kernels apply, ATen's ops elsewhere or with kernels.norm = aten), also with the
// residual add before it: add_forward gives h = x + m and RMSNorm(h) from one read of x and m, and
// its backward adds the gradient reaching h along the stream into the norm's.
#pragma once
#include <torch/nn/module.h>

#include <optional>
#include <utility>

namespace ember {

class RMSNorm : public torch::nn::Module {
 public:
  RMSNorm(int64_t dim, double eps);
  at::Tensor forward(const at::Tensor& x);
  // {h, RMSNorm(h)} for h = x + m: the stream the next residual add continues, and the normed
  // input of what reads it, in `y_type` (default: h's type; bf16 saves a later cast under autocast).
  std::pair<at::Tensor, at::Tensor> add_forward(const at::Tensor& x, const at::Tensor& m,
                                                std::optional<at::ScalarType> y_type = std::nullopt);
  // The same formula spelled out in fp64 ops, for tests.
  at::Tensor reference(const at::Tensor& x);

 private:
  at::Tensor weight_;
  double eps_;
};

// Bytes per token an RMSNorm of `width` keeps for backward with activations of `elem` bytes: its
// fp32 input (the fused pass saves it and 1/rms per row, not its output), and what the next matmul
// keeps of its output: the output itself in fp32, its low-precision copy under autocast (elem < 4).
inline double rmsnorm_activation_bytes_per_token(int64_t width, int64_t elem) {
  return static_cast<double>(width) * (4.0 + static_cast<double>(elem));
}

}  // namespace ember
