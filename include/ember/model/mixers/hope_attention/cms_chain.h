// Hope-attention's Continuum Memory System as a block's feed-forward chain (model/mlp_chain.h): k
// SwiGLU levels, each of which may learn in context by its LevelUpdate (fast_swiglu.h), reading the
// model's next-token Feedback: the first static pass's rows (two_pass) or its own output stream (lens).
#pragma once
#include "ember/model/mixers/hope_attention/fast_swiglu.h"
#include "ember/model/mlp_chain.h"

namespace ember {

// The levels' fast weights while decoding, one per level.
struct CmsChainState : ChainState {
  std::vector<FastSwiGLUState> levels;
};

class CmsChain : public MlpChain {
 public:
  // updates: one per level, or empty (every level static); a ConfigError naming the kind otherwise.
  CmsChain(torch::nn::Module& owner, const MixerContext& ctx, const std::vector<int64_t>& widths,
           std::vector<LevelUpdate> updates);
  FeedbackNeeds feedback_needs() const override;
  // Per learning level its inner gradient, 4 matmuls of d x F (8 d F), x 3 when the outer gradient
  // flows through it (`differentiate`).
  double in_context_flops_per_token() const override;
  // Besides the static chain's: a learning level keeps each chunk's weights, per sequence, for
  // backward (fp32, and their low-precision copies under autocast), 3 d F of them per C tokens.
  double activation_bytes_per_token(int64_t elem) const override;

 protected:
  at::Tensor level(size_t l, const at::Tensor& u, const at::Tensor& x, const Feedback& feedback,
                   ChainState* state) override;
  std::unique_ptr<ChainState> make_state() const override;

 private:
  std::vector<LevelUpdate> updates_;  // per level; empty: all static
};

// The registry row's make_chain for hope_attention: its config's level updates.
std::unique_ptr<MlpChain> make_cms_chain(torch::nn::Module& owner, const MixerContext& ctx,
                                         const std::vector<int64_t>& widths);

}  // namespace ember
