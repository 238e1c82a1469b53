// Mixer kind `titans`: Titans (LMM), the neural long-term memory as the token mixer
// (docs/mixers.md, "Titans"). Per layer, on the normalised input x with N_p persistent tokens
// prepended (learned vectors; their outputs are dropped):
//   q, k, v = SiLU(CausalDepthwiseConv(x W_{Q,K,V})) per head;  q, k l2-normalised     (Titans §4.4)
//   theta_t = theta_max sigmoid(x w_theta + b_theta),  eta_t = sigmoid(x w_eta + b_eta),
//   alpha_t = sigmoid(x w_alpha + b_alpha)                                               (per head)
//   y = neural memory (model/mixers/neural_memory.h) from learned per-head W1_0, W2_0, S_0 = 0
//   out = W_O( merge_heads( RMSNorm_head(y) * SiLU(x W_g) ) )
#pragma once
#include "ember/model/mixer.h"
#include "ember/model/mixers/neural_memory.h"
#include "ember/model/norm.h"

namespace ember {

// model.mixer.titans.*
struct TitansConfig {
  static constexpr const char* kKind = "titans";
  int64_t chunk_size = 16;  // C: gradients within a chunk at the chunk-start weights (TNT: 16-64)
  Retrieval retrieval = Retrieval::after;
  int64_t memory_expansion = 4;  // m = expansion * d_h, the memory MLP's hidden width
  double theta_max = 0.1;        // the largest inner learning rate
  double theta_bias = 0.0;       // initial gate biases: theta = theta_max / 2,
  double eta_bias = 0.0;         // momentum eta = 1/2,
  double alpha_bias = -4.0;      // forgetting alpha = 0.018 per token at initialisation
  int64_t conv_kernel = 4;
  int64_t persistent_tokens = 4;  // N_p

  void fields(FieldVisitor& v);
};

class Titans : public Mixer {
 public:
  Titans(const MixerContext& ctx, const TitansConfig& cfg);
  at::Tensor forward(const at::Tensor& x, const Rope& rope) override;
  // Keeps the convolution windows, the chunk-start memory and the current chunk's inputs.
  at::Tensor decode(const at::Tensor& x, const Rope& rope, std::unique_ptr<MixerState>& state) override;
  int64_t extra_flops_per_token(int64_t seq_len) const override;
  double activation_bytes_per_token(int64_t elem) const override;

  // The memory's per-token inputs for x [B, T, d] (persistent tokens already prepended);
  // `windows` (null: x starts the sequence) holds the last conv_kernel - 1 projections of q, k, v
  // before x (empty: none yet) and is advanced past x.
  MemoryInputs memory_inputs(const at::Tensor& x, std::vector<at::Tensor>* windows) const;
  MemoryState initial_state(int64_t batch) const;  // W1_0, W2_0 per head, S_0 = 0
  const TitansConfig& config() const { return cfg_; }

 private:
  at::Tensor with_persistent(const at::Tensor& x) const;
  at::Tensor scan(MemoryState& state, const MemoryInputs& in) const;  // fp32 or wider
  at::Tensor output(const at::Tensor& x, const at::Tensor& y) const;  // y [B, H, T, d_h] -> [B, T, d]
  TitansConfig cfg_;
  int64_t n_heads_, head_dim_;
  at::Tensor w_qkv_[3], taps_[3], w_gates_, b_gates_, w1_, w2_, persistent_, wg_, wo_;
  std::shared_ptr<RMSNorm> out_norm_;
};

}  // namespace ember
