// Rotary position embedding, rotate-half convention (docs/mixers.md, attention):
// omega_i = base^(-2i/d_h), RoPE(x, p) = [x_a cos - x_b sin, x_b cos + x_a sin].
#pragma once
#include <ATen/ATen.h>

namespace ember {

class Rope {
 public:
  Rope(int64_t head_dim, int64_t max_seq_len, double base);
  // x [B, H, T, d_h], positions offset..offset+T-1
  at::Tensor apply(const at::Tensor& x, int64_t offset = 0) const;
  int64_t max_seq_len() const { return cos_.size(0); }

 private:
  at::Tensor cos_, sin_;  // [max_seq_len, d_h/2], fp32
};

}  // namespace ember
