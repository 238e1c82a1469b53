#include "ember/model/mixers/titans/windowed_attention.h"

namespace ember {

at::Tensor windowed_mask(const at::Tensor& q_pos, const at::Tensor& k_pos, int64_t window) {
  const auto qp = q_pos.unsqueeze(1), kp = k_pos.unsqueeze(0);
  const auto causal = kp <= qp, recent = (qp - kp) < window, persistent = kp < 0;
  return causal.logical_and(recent.logical_or(persistent));
}

at::Tensor windowed_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& q_pos,
                              const at::Tensor& k_pos, int64_t window) {
  return at::scaled_dot_product_attention(q, k, v, windowed_mask(q_pos, k_pos, window));
}

}  // namespace ember
