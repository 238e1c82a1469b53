// One pre-norm decoder block: h = x + Mixer(RMSNorm(x)); out = h + MLP(RMSNorm(h)). The
// feed-forward kind (model/feed_forward_registry.h) may make the MLP a chain of them, each with its
// own norm and residual (model/mlp_chain.h), which may read the pass's ChainContext.
#pragma once
#include <torch/nn/module.h>

#include "ember/model/mixer.h"
#include "ember/model/mlp_chain.h"
#include "ember/model/norm.h"
#include "ember/model/residual_stream.h"

namespace ember {

// What one block added to the residual stream, for analyses (docs/tapered.md, "Mechanism").
struct BlockTrace {
  at::Tensor mixer_residual;  // x: the stream the mixer output is added to
  at::Tensor mixer_out;
  at::Tensor mlp_residual;  // h = x + mixer_out: the stream the MLP output is added to
  at::Tensor mlp_out;       // what the MLP (chain) added to h
  at::Tensor mixer_input;  // RMSNorm(x): what the mixer read
};

// What a block carries from one decoding call to the next: its mixer's and its chain's.
struct BlockState {
  std::unique_ptr<MixerState> mixer;
  std::unique_ptr<ChainState> chain;
};

class Block : public torch::nn::Module {
 public:
  Block(const ModelConfig& cfg, int64_t layer, int64_t d_ff);
  // The block on `stream` (model/residual_stream.h): each addition is left pending for the next
  // norm that reads the stream, the block's last for the next block's, or the final norm's.
  // `context`: what the chain reads besides its input (model/mlp_chain.h; none: a static chain).
  // `trace`, when given, receives what the block added.
  void forward(ResidualStream& stream, const Rope& rope, const ChainContext& context = {}, BlockTrace* trace = nullptr);
  // The block's output x + Block(x), materialised: one block on its own.
  at::Tensor forward(const at::Tensor& x, const Rope& rope, const ChainContext& context = {});
  // The next tokens of sequences whose earlier ones `state` holds (Mixer::decode); `context` is the
  // chain's for the positions before the new tokens.
  void decode(ResidualStream& stream, const Rope& rope, BlockState& state, const ChainContext& context = {});
  // Forward FLOPs per token at sequence length T: 2 per matmul weight + the mixer's own.
  double forward_flops_per_token(int64_t seq_len) const;
  // Bytes per token the block keeps for backward (activations of `elem` bytes; the residual stream
  // and norms stay fp32): its norm's, the mixer's and the chain's.
  double activation_bytes_per_token(int64_t elem) const;
  Mixer& mixer() { return *mixer_; }
  const MlpChain& chain() const { return *chain_; }
  SwiGLU& mlp() { return *chain_->mlps().front(); }  // the first (usually only) MLP
  const std::vector<std::shared_ptr<SwiGLU>>& mlps() const { return chain_->mlps(); }
  int64_t mlp_width() const { return chain_->width(); }  // the chain's total width: the layer's MLP budget

 private:
  // forward() and decode() (`decoding` given: the block's state), one way.
  void run(ResidualStream& stream, const Rope& rope, const ChainContext& context, BlockState* decoding,
           BlockTrace* trace);
  std::shared_ptr<RMSNorm> mixer_norm_;
  std::shared_ptr<Mixer> mixer_;
  std::unique_ptr<MlpChain> chain_;
};

}  // namespace ember
