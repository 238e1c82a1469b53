// Causal multi-head softmax attention with RoPE and optional GQA (docs/mixers.md, kind
// `attention`), and gated attention (kind `gated_attention`): the per-head SDPA output is
// multiplied by G = sigmoid(X W_theta) of the normalised layer input before W_O (position G1), one
// gate per query head and channel (elementwise) or per query head (headwise).
// impl sdpa uses at::scaled_dot_product_attention; reference spells out the masked softmax.
#pragma once
#include "ember/model/mixer.h"
#include "ember/model/mixer_attention.h"

namespace ember {

enum class AttentionImpl { sdpa, reference };
inline std::span<const EnumName<AttentionImpl>> enum_names(AttentionImpl) {
  static constexpr EnumName<AttentionImpl> names[] = {{AttentionImpl::sdpa, "sdpa"},
                                                      {AttentionImpl::reference, "reference"}};
  return names;
}
enum class Gate { elementwise, headwise, none };
inline std::span<const EnumName<Gate>> enum_names(Gate) {
  static constexpr EnumName<Gate> names[] = {
      {Gate::elementwise, "elementwise"}, {Gate::headwise, "headwise"}, {Gate::none, "none"}};
  return names;
}

// model.mixer.attention.*
struct AttentionConfig {
  static constexpr const char* kKind = "attention";
  AttentionImpl impl = AttentionImpl::sdpa;
  void fields(FieldVisitor& v);
};

// model.mixer.gated_attention.*
struct GatedAttentionConfig {
  static constexpr const char* kKind = "gated_attention";
  AttentionImpl impl = AttentionImpl::sdpa;
  Gate gate = Gate::elementwise;  // none: plain attention (the ablation's control)
  // Narrow each layer's MLP by round(gate weights / 3d) so the model keeps attention's parameter
  // count, as the paper's dense models did (off: the taper stays the only change to MLP widths).
  bool match_params = false;
  void fields(FieldVisitor& v);
};

// The MLP width that pays for a gate of `gate_weights` weights in a layer of width d and MLP
// budget d_ff (3 d weights per unit of width); a ConfigError when nothing would be left.
int64_t gate_matched_d_ff(int64_t d_ff, int64_t d_model, int64_t gate_weights);

class Attention : public Mixer, public MixerAttention {
 public:
  Attention(const MixerContext& ctx, AttentionImpl impl, Gate gate);
  at::Tensor forward(const at::Tensor& x, const Rope& rope) override;
  // With a KV cache: the new queries attend to every cached key up to their own position.
  at::Tensor decode(const at::Tensor& x, const Rope& rope, std::unique_ptr<MixerState>& state) override;
  int64_t extra_flops_per_token(int64_t seq_len) const override;
  int64_t causal_masked_flops_per_token(int64_t seq_len) const override;
  double activation_bytes_per_token(int64_t elem) const override;
  // q, k, v (and gate) are its input's only readers: projections
  InputPrecision input_precision() const override { return InputPrecision::matmul; }
  const MixerAttention* attention() const override { return this; }
  void set_impl(AttentionImpl impl) { impl_ = impl; }
  at::Tensor gate_values(const at::Tensor& x) const override;
  bool gated() const override { return wg_.defined(); }
  at::Tensor attention_probabilities(const at::Tensor& x, const Rope& rope) const override;

  // S = Q K^T / sqrt(d_h) + causal mask, P = softmax(S) in fp32, Y = P V. q,k,v [B, H, T, d_h].
  static at::Tensor reference_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v);

 private:
  // q, k, v [B, h, T, d_h] of x and its gate G (undefined without one): the projections that read
  // x, as one GEMM (kernels/projections.h).
  struct Projected {
    at::Tensor q, k, v, gate;
  };
  Projected project(const at::Tensor& x) const;
  at::Tensor split_heads(const at::Tensor& y, int64_t h) const;  // [B, T, h d_h] -> [B, h, T, d_h]
  at::Tensor gate_of(const at::Tensor& pre) const;               // sigmoid(X W_theta) as [B, T, H, w]
  // Y = attention of q [B, H, Tq, d_h] over k, v [B, H_kv, Tk, d_h] (GQA expanded here), the query
  // at row i being at position Tk - Tq + i (causal); then the gate G [B, Tq, H, w] and W_O.
  at::Tensor attend(const at::Tensor& q, at::Tensor k, at::Tensor v, const at::Tensor& gate) const;
  int64_t n_heads_, n_kv_heads_, head_dim_;
  AttentionImpl impl_;
  Gate gate_;
  at::Tensor wq_, wk_, wv_, wo_, wg_;
};

}  // namespace ember
