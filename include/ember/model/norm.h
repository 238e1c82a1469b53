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
  // Bytes per token it keeps for backward on the fp32 stream (kernels/rms_norm.h, the path kernels.norm
  // takes); what reads its output keeps of that is the reader's.
  int64_t saved_bytes_per_token() const;

 private:
  at::Tensor weight_;
  double eps_;
};

}  // namespace ember
