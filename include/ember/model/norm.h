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

}  // namespace ember
