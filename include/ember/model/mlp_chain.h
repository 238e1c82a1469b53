// The feed-forward part of a block, after its mixer: a chain of SwiGLU MLPs, each with its own
// RMSNorm and residual, x <- x + MLP_l(RMSNorm_l(x)); one MLP of the layer's width unless the mixer
// kind's registry row asks for other widths (mlp_widths) or its own chain (make_chain: a chain whose
// MLPs learn in context, which reads the model's Feedback).
#pragma once
#include <torch/nn/module.h>

#include <memory>
#include <vector>

#include "ember/model/feedback.h"
#include "ember/model/mixer.h"
#include "ember/model/mlp.h"
#include "ember/model/norm.h"

namespace ember {

// What a chain carries from one decoding call to the next (its own kind; none for a static chain).
struct ChainState {
  virtual ~ChainState() = default;
};

class MlpChain {
 public:
  // Registers mlp_norm, mlp (and mlp_norm_l, mlp_l for l >= 1) in `owner`, the block, in that order.
  MlpChain(torch::nn::Module& owner, const MixerContext& ctx, const std::vector<int64_t>& widths);
  virtual ~MlpChain() = default;
  // The stream after every MLP of the chain, for h [B, T, D]. `state` is given when decoding (the
  // next tokens of sequences whose earlier ones it holds; made on the first call that needs one).
  at::Tensor forward(const at::Tensor& h, const Feedback& feedback = {}, std::unique_ptr<ChainState>* state = nullptr);
  virtual FeedbackNeeds feedback_needs() const { return {}; }
  // Forward + backward FLOPs per token of learning in context (0 for a static chain).
  virtual double in_context_flops_per_token() const { return 0.0; }
  // Bytes per token kept for backward: each MLP's norm and its own activations (model/block.h).
  virtual double activation_bytes_per_token(int64_t elem) const;
  const std::vector<std::shared_ptr<SwiGLU>>& mlps() const { return mlps_; }
  int64_t width() const;  // the chain's total width: the layer's MLP budget

 protected:
  // MLP l's output for its normed input u (x: the stream it adds to); `state` non-null in decoding.
  virtual at::Tensor level(size_t l, const at::Tensor& u, const at::Tensor& x, const Feedback& feedback,
                           ChainState* state);
  virtual std::unique_ptr<ChainState> make_state() const { return nullptr; }
  std::vector<std::shared_ptr<RMSNorm>> norms_;
  std::vector<std::shared_ptr<SwiGLU>> mlps_;
};

// The chain of the kind's registry row for a layer whose MLP budget is d_ff.
std::unique_ptr<MlpChain> make_mlp_chain(torch::nn::Module& owner, const MixerContext& ctx, int64_t d_ff);

}  // namespace ember
