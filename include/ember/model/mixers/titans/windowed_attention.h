// Sliding-window causal attention with an always-visible prefix (Titans' MAG branch, SW-Attn*):
// the query at position p sees the keys at p - window < p' <= p and every key at a negative
// position (the persistent memory, prepended at -N_p .. -1). Positions are absolute, so a decoder
// passes the positions of the keys it has cached.
#pragma once
#include <ATen/ATen.h>

namespace ember {

// [Tq, Tk] bool, true where the query at q_pos[i] may attend to the key at k_pos[j].
at::Tensor windowed_mask(const at::Tensor& q_pos, const at::Tensor& k_pos, int64_t window);

// softmax(Q K^T / sqrt(d_h) + mask) V for q [B, H, Tq, d_h], k and v [B, H, Tk, d_h].
at::Tensor windowed_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& q_pos,
                              const at::Tensor& k_pos, int64_t window);

}  // namespace ember
