// Causal multi-head softmax attention with RoPE and optional GQA (spec/mixers.md §2), and gated
// attention (§3, kind gated_attention): the per-head SDPA output is multiplied by
// G = sigmoid(X W_theta) of the normalised layer input before W_O (position G1), one gate per
// query head and channel (elementwise) or per query head (headwise).
// impl "sdpa" uses at::scaled_dot_product_attention; "reference" spells out the masked softmax.
#pragma once
#include "ember/model/mixer.h"

namespace ember {

class Attention : public Mixer {
 public:
  explicit Attention(const ModelConfig& cfg);
  at::Tensor forward(const at::Tensor& x, const Rope& rope) override;
  int64_t extra_flops_per_token(int64_t seq_len) const override;
  void set_reference(bool on) { reference_ = on; }
  // The gate of x [B, T, d]: [B, T, H, d_h] (elementwise) or [B, T, H, 1] (headwise); undefined
  // without a gate.
  at::Tensor gate_values(const at::Tensor& x) const;
  bool gated() const { return wg_.defined(); }
  // Attention probabilities P [B, H, T, T] of x [B, T, d] (explicit softmax, fp32 or wider).
  at::Tensor attention_probabilities(const at::Tensor& x, const Rope& rope) const;

  // S = Q K^T / sqrt(d_h) + causal mask, P = softmax(S) in fp32, Y = P V. q,k,v [B, H, T, d_h].
  static at::Tensor reference_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v);

 private:
  at::Tensor heads(const at::Tensor& x, const at::Tensor& w, int64_t h) const;  // [B, h, T, d_h]
  int64_t n_heads_, n_kv_heads_, head_dim_;
  bool reference_;
  std::string gate_;  // none | headwise | elementwise
  at::Tensor wq_, wk_, wv_, wo_, wg_;
};

}  // namespace ember
