// The cms feed-forward's chain (model/mlp_chain.h): k SwiGLU levels, each of which may learn in
// context by its LevelUpdate (fast_swiglu.h), reading the pass's next-token teach signal
// (model/teach_signal.h): the first static pass's rows (two_pass) or its own output stream (lens).
#pragma once
#include "ember/model/mlp_chain.h"
#include "ember/model/mlps/cms/fast_swiglu.h"

namespace ember {

// The levels' fast weights while decoding, one per level.
struct CmsChainState : ChainState {
  std::vector<FastSwiGLUState> levels;
};

class CmsChain : public MlpChain {
 public:
  // updates: one per level, or empty (every level static); a ConfigError naming the options' path otherwise.
  CmsChain(torch::nn::Module& owner, const FeedForwardContext& ctx, const std::vector<int64_t>& widths,
           std::vector<LevelUpdate> updates);
  TeachNeeds teach_needs() const override;
  // Per learning level its inner gradient, 4 matmuls of d x F (8 d F), x 3 when the outer gradient
  // flows through it (`differentiate`).
  double in_context_flops_per_token() const override;
  // Besides the static chain's: a learning level keeps each chunk's weights, per sequence, for
  // backward (fp32, and their low-precision copies under autocast), 3 d F of them per C tokens.
  double activation_bytes_per_token(int64_t elem) const override;

 protected:
  at::Tensor level(size_t l, const at::Tensor& u, const at::Tensor& x, const ChainContext& context,
                   ChainState* state) override;
  std::unique_ptr<ChainState> make_state() const override;
  InputPrecision levels_input_precision() const override;  // the stream's when a level learns in context

 private:
  std::vector<LevelUpdate> updates_;  // per level; empty: all static
};

// The registry row's widths and chain for kind cms (src/model/feed_forward_registry.cpp).
std::vector<int64_t> cms_widths(const FeedForwardContext& ctx, int64_t d_ff);
std::unique_ptr<MlpChain> make_cms_chain(torch::nn::Module& owner, const FeedForwardContext& ctx,
                                         const std::vector<int64_t>& widths);

}  // namespace ember
