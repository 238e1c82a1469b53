// The feed-forward seam's interface, the part of a block after its mixer: a chain of SwiGLU MLPs,
// each with its own RMSNorm and residual, x <- x + MLP_l(RMSNorm_l(x)). The feed-forward kind
// (model/feed_forward_registry.h) gives the widths (one MLP of the layer's width for `swiglu`) and
// may derive its own chain, whose MLPs compute differently (a chain that learns in context reads
// the pass's ChainContext).
#pragma once
#include <torch/nn/module.h>

#include <memory>
#include <string>
#include <vector>

#include "ember/config/kind_sections.h"
#include "ember/model/autocast.h"
#include "ember/model/mlp.h"
#include "ember/model/norm.h"
#include "ember/model/residual_stream.h"
#include "ember/model/teach_signal.h"

namespace ember {

// What a chain is built from: the chassis sizes of its layer and the selected kind's options.
struct FeedForwardContext {
  int64_t d_model = 0, layer = 0, n_layers = 1;
  double init_std = 0.02;
  double out_std = 0.02;  // each MLP's down projection (scaled by 1/sqrt(2L) when asked)
  double norm_eps = 1e-6;
  const KindChoice& config;  // model.mlp, or what a mixer preset stands for
  std::string path;          // where the kind's options are set, for errors ("model.mlp.cms")
};

// What a chain may read besides its input in one pass of the model (model/chain_context.h makes
// it): the next-token teach signal, for chains that learn in context.
struct ChainContext {
  TeachSignal teach;
  bool defined() const { return teach.defined(); }
};

// What a chain carries from one decoding call to the next (its own kind; none for a static chain).
struct ChainState {
  virtual ~ChainState() = default;
};

class MlpChain {
 public:
  // Registers mlp_norm, mlp (and mlp_norm_l, mlp_l for l >= 1) in `owner`, the block, in that order.
  MlpChain(torch::nn::Module& owner, const FeedForwardContext& ctx, const std::vector<int64_t>& widths);
  virtual ~MlpChain() = default;
  // Runs every MLP of the chain on `stream` (model/residual_stream.h; on entry the block's mixer
  // output is pending on it), each output left pending for the next norm's pass: the last for the
  // next block's, or the final norm's. `state` is given when decoding (the next tokens of sequences
  // whose earlier ones it holds; made on the first call that needs one).
  void forward(ResidualStream& stream, const ChainContext& context = {}, std::unique_ptr<ChainState>* state = nullptr);
  virtual TeachNeeds teach_needs() const { return {}; }
  // Forward + backward FLOPs per token of learning in context (0 for a static chain).
  virtual double in_context_flops_per_token() const { return 0.0; }
  // Bytes per token kept for backward: each MLP's norm's and each MLP's (model/block.h).
  virtual double activation_bytes_per_token(int64_t elem) const;
  const std::vector<std::shared_ptr<SwiGLU>>& mlps() const { return mlps_; }
  int64_t width() const;  // the chain's total width: the layer's MLP budget

 protected:
  // MLP l's output for its normed input u (x: the stream it adds to); `state` non-null in decoding.
  virtual at::Tensor level(size_t l, const at::Tensor& u, const at::Tensor& x, const ChainContext& context,
                           ChainState* state);
  virtual std::unique_ptr<ChainState> make_state() const { return nullptr; }
  // How precisely the levels need their normed inputs (model/autocast.h): an MLP reads its input
  // through its projections alone (`matmul`); a chain that learns in context reads it in fp32 too.
  virtual InputPrecision levels_input_precision() const { return InputPrecision::matmul; }
  std::vector<std::shared_ptr<RMSNorm>> norms_;
  std::vector<std::shared_ptr<SwiGLU>> mlps_;
};

}  // namespace ember
