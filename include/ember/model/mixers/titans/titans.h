// Mixer kind `titans`: Titans' neural long-term memory as the token mixer (docs/mixers.md,
// "Titans"), alone (variant lmm) or gating a sliding-window attention branch (variant mag). Per
// layer, on the normalised input x with N_p persistent tokens prepended (learned vectors; their
// outputs are dropped):
//   q, k, v = SiLU(CausalDepthwiseConv(x W_{Q,K,V})) per head;  q, k l2-normalised     (Titans §4.4)
//   theta_t = theta_max sigmoid(x w_theta + b_theta),  eta_t = sigmoid(x w_eta + b_eta),
//   alpha_t = sigmoid(x w_alpha + b_alpha)                                               (per head)
//   y = neural memory (model/mixers/titans/neural_memory.h) from learned per-head W1_0, W2_0, S_0 = 0
//   lmm: out = W_O( merge_heads( RMSNorm_head(y) * SiLU(x W_g) ) )
//   mag: a = SW-Attn*(x~): RoPE attention over a window of `window` tokens plus the persistent
//        tokens' keys, which every query sees (windowed_attention.h; Titans Eq. 27)
//        out = W_O( merge_heads( RMSNorm_a(a) * sigmoid(RMSNorm_head(y)) ) )          (Eq. 28)
#pragma once
#include "ember/model/mixer.h"
#include "ember/model/mixer_memory.h"
#include "ember/model/mixers/titans/neural_memory.h"
#include "ember/model/norm.h"

namespace ember {

enum class TitansVariant { lmm, mag };
inline std::span<const EnumName<TitansVariant>> enum_names(TitansVariant) {
  static constexpr EnumName<TitansVariant> names[] = {{TitansVariant::lmm, "lmm"}, {TitansVariant::mag, "mag"}};
  return names;
}

// The memory's form: the 2-layer MLP of TNT / Nested Learning, or linear (the paper's L_M = 1).
enum class MemoryForm { mlp, linear };
inline std::span<const EnumName<MemoryForm>> enum_names(MemoryForm) {
  static constexpr EnumName<MemoryForm> names[] = {{MemoryForm::mlp, "mlp"}, {MemoryForm::linear, "linear"}};
  return names;
}

// model.mixer.titans.*
struct TitansConfig {
  static constexpr const char* kKind = "titans";
  int64_t chunk_size = 16;  // C: gradients within a chunk at the chunk-start weights (TNT: 16-64)
  Retrieval retrieval = Retrieval::after;
  MemoryForm memory = MemoryForm::mlp;  // linear: M(z) = [z +] z W, W [d_h, d_h]
  int64_t memory_expansion = 4;         // m = expansion * d_h, the memory MLP's hidden width
  bool memory_residual = true;   // M(z) = z + SiLU(z W1) W2; false: SiLU(z W1) W2
  double theta_max = 0.1;        // the largest inner learning rate
  double theta_bias = 0.0;       // initial gate biases: theta = theta_max / 2,
  double eta_bias = 0.0;         // momentum eta = 1/2,
  double alpha_bias = -4.0;      // forgetting alpha = 0.018 per token at initialisation
  // Each token's inner gradient is scaled to norm <= this (0: off). Without a bound the inner
  // descent diverges once theta x chunk x 1/(1 - eta) outgrows the loss's curvature, and the
  // memory overflows fp32 within a sequence (docs/mixers.md, "Titans: a bounded inner step").
  double inner_grad_clip = 1.0;
  InnerStep inner_step = InnerStep::plain;  // normalized: theta is the fraction of a full write
  int64_t conv_kernel = 4;
  int64_t persistent_tokens = 4;  // N_p
  TitansVariant variant = TitansVariant::lmm;  // lmm: the memory alone; mag: memory as a gate
  int64_t window = 64;                         // mag: the attention branch's window, in tokens

  void fields(FieldVisitor& v);
  MemoryRule memory_rule() const { return {chunk_size, retrieval, inner_grad_clip, memory_residual, inner_step}; }
};

struct AttentionWindowCache;  // mag decoding: the keys and values the window still needs

class Titans : public Mixer, public MixerMemory {
 public:
  Titans(const MixerContext& ctx, const TitansConfig& cfg);
  at::Tensor forward(const at::Tensor& x, const Rope& rope) override;
  // Keeps the convolution windows, the chunk-start memory and the current chunk's inputs (mag: and
  // the keys and values the window still needs, with the persistent ones).
  at::Tensor decode(const at::Tensor& x, const Rope& rope, std::unique_ptr<MixerState>& state) override;
  int64_t extra_flops_per_token(int64_t seq_len) const override;
  // Per row of x~ (T + N_p rows per sequence of T tokens) over whole chunks: what memory_inputs,
  // the memory (memory_scan_saved_bytes_per_token), the attention branch and the output keep
  // (titans.cpp, beside each); tests/unit/test_saved_bytes.cpp measures it.
  double activation_bytes_per_token(int64_t elem) const override;
  const MixerMemory* memory() const override { return this; }
  std::vector<MemoryChunk> memory_profile(const at::Tensor& x) const override;
  std::vector<double> forget_gate_bias() const override;

  // The memory's per-token inputs for x [B, T, d] (persistent tokens already prepended);
  // `windows` (null: x starts the sequence) holds the last conv_kernel - 1 projections of q, k, v
  // before x (empty: none yet) and is advanced past x.
  MemoryInputs memory_inputs(const at::Tensor& x, std::vector<at::Tensor>* windows) const;
  MemoryState initial_state(int64_t batch) const;  // W1_0, W2_0 per head, S_0 = 0
  at::Tensor with_persistent(const at::Tensor& x) const;  // x~ = P || x, [B, N_p + T, d]
  at::Tensor gate_biases() const { return b_gates_; }     // [3, H]: theta, eta, alpha
  const TitansConfig& config() const { return cfg_; }

 private:
  at::Tensor scan(MemoryState& state, const MemoryInputs& in) const;  // fp32 or wider
  // mag: the attention branch [B, H, L, d_h] of ext [B, L, d], whose first n_persistent rows are
  // persistent tokens and whose next row is the token at position `offset`; `cache` (null: none)
  // holds the earlier keys and values and keeps what later tokens still see.
  at::Tensor attention_branch(const at::Tensor& ext, const Rope& rope, int64_t n_persistent, int64_t offset,
                              AttentionWindowCache* cache) const;
  // y (memory) and a (mag: attention) [B, H, L, d_h] -> [B, L, d]
  at::Tensor output(const at::Tensor& x, const at::Tensor& y, const at::Tensor& a) const;
  TitansConfig cfg_;
  int64_t n_heads_, head_dim_;
  at::Tensor w_qkv_[3], taps_[3], w_gates_, b_gates_, w1_, w2_, persistent_, wg_, wo_, attn_w_[3];
  std::shared_ptr<RMSNorm> out_norm_, attn_norm_;
};

}  // namespace ember
