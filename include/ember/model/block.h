// One pre-norm decoder block: h = x + Mixer(RMSNorm(x)); out = h + MLP(RMSNorm(h)). The mixer kind
// may ask for a chain of MLPs instead (Hope-attention's CMS levels), each with its own norm and
// residual: x <- x + MLP_l(RMSNorm_l(x)); the chain's widths come from block_mlp_widths, and
// levels that learn in context (block_level_updates) read a teach signal (fast_swiglu.h).
#pragma once
#include <torch/nn/module.h>

#include "ember/model/fast_swiglu.h"
#include "ember/model/mixer.h"
#include "ember/model/mlp.h"
#include "ember/model/norm.h"

namespace ember {

// What one block added to the residual stream, for analyses (docs/tapered.md, "Mechanism").
struct BlockTrace {
  at::Tensor mixer_residual;  // x: the stream the mixer output is added to
  at::Tensor mixer_out;
  at::Tensor mlp_residual;  // h = x + mixer_out: the stream the MLP output is added to
  at::Tensor mlp_out;       // what the MLP (chain) added to h
  at::Tensor mixer_input;  // RMSNorm(x): what the mixer read
};

class Block : public torch::nn::Module {
 public:
  Block(const ModelConfig& cfg, int64_t layer, int64_t d_ff);
  // Without a teach signal every level is static (the first pass of a model that learns in context).
  at::Tensor forward(const at::Tensor& x, const Rope& rope, BlockTrace* trace = nullptr,
                     const TeachSignal& teach = {});
  // The next tokens of sequences whose earlier ones the mixer's `state` holds (Mixer::decode); levels
  // that learn in context keep theirs in `levels` and read the teach signals of the positions before
  // the new tokens (fast_swiglu_decode); without `levels` they are static.
  at::Tensor decode(const at::Tensor& x, const Rope& rope, std::unique_ptr<MixerState>& state,
                    std::vector<FastSwiGLUState>* levels = nullptr, const TeachSignal& teach = {});
  bool learns_in_context() const;  // some level is updated in context
  int64_t levels_learning_from(TeachSource source) const;
  // Forward FLOPs per token at sequence length T: 2 per matmul weight + the mixer's own.
  double forward_flops_per_token(int64_t seq_len) const;
  // The inner gradients of the levels that learn in context: 8 d F per level (x 3 when the outer
  // gradient flows through them).
  double inner_gradient_flops_per_token() const;
  // Bytes per token the block keeps for backward (activations of `elem` bytes; the residual stream
  // and norms stay fp32): each RMSNorm keeps its input and output (fp32) and, under autocast, the
  // low-precision copy the next matmul keeps; then the mixer's and the MLP's own.
  double activation_bytes_per_token(int64_t elem) const;
  Mixer& mixer() { return *mixer_; }
  SwiGLU& mlp() { return *mlps_.front(); }  // the first (usually only) MLP
  const std::vector<std::shared_ptr<SwiGLU>>& mlps() const { return mlps_; }
  int64_t mlp_width() const;  // the chain's total width: the layer's MLP budget

 private:
  at::Tensor mlp_chain(const at::Tensor& h, const TeachSignal& teach, std::vector<FastSwiGLUState>* levels);
  std::shared_ptr<RMSNorm> mixer_norm_;
  std::shared_ptr<Mixer> mixer_;
  std::vector<std::shared_ptr<RMSNorm>> mlp_norms_;
  std::vector<std::shared_ptr<SwiGLU>> mlps_;
  std::vector<LevelUpdate> updates_;  // per MLP; empty: all static
};

}  // namespace ember
