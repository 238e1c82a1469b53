// RMSNorm(x) = x / sqrt(mean_j x_j^2 + eps) * g   (docs/mixers.md, the chassis), gain init 1, no bias.
#pragma once
#include <torch/nn/module.h>

namespace ember {

class RMSNorm : public torch::nn::Module {
 public:
  RMSNorm(int64_t dim, double eps);
  at::Tensor forward(const at::Tensor& x);
  // The same formula spelled out in fp32 ops, for tests.
  at::Tensor reference(const at::Tensor& x);

 private:
  at::Tensor weight_;
  double eps_;
};

// Bytes per token an RMSNorm of `width` keeps for backward with activations of `elem` bytes: its
// fp32 input and output and, under autocast (elem < 4), the low-precision copy the next matmul keeps.
inline double rmsnorm_activation_bytes_per_token(int64_t width, int64_t elem) {
  const double w = static_cast<double>(width);
  return 8.0 * w + (elem < 4 ? static_cast<double>(elem) * w : 0.0);
}

}  // namespace ember
