// The feed-forward seam: model.mlp.kind picks a row of the feed-forward registry (the table in
// src/model/feed_forward.cpp: kind -> description, options section, widths, chain). A kind turns a
// layer's MLP budget d_ff (the taper's width, less what the mixer takes: MixerKind::mlp_budget)
// into the block's chain of SwiGLU MLPs (model/mlp_chain.h); its options are model.mlp.<kind>.*.
// A mixer kind may be a preset that brings its own feed-forward (hope_attention: attention + cms,
// with the chain's options in model.mixer.hope_attention.*; MixerKind::mlp_preset).
#pragma once
#include <torch/nn/module.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ember/model/mlp_chain.h"
#include "ember/model/model_config.h"

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

// The feed-forward the blocks of a model use, and where its options are set.
struct FeedForwardChoice {
  KindChoice config;
  std::string path;
};
FeedForwardChoice feed_forward_choice(const ModelConfig& cfg);
FeedForwardContext feed_forward_context(const ModelConfig& cfg, int64_t layer, const FeedForwardChoice& choice);

struct FeedForwardKind {
  std::string name;
  std::string description;                                             // one line, for --help, inspect and errors
  std::function<std::unique_ptr<KindOptions>()> default_options = {};  // empty: the kind has no options
  std::vector<std::string> reads = {};                                 // other kinds whose sections it reads
  // The chain's widths for a layer whose MLP budget is d_ff; empty: one MLP of width d_ff.
  std::function<std::vector<int64_t>(const FeedForwardContext&, int64_t d_ff)> widths = {};
  // The kind's own chain of those widths, registered in the block `owner`; empty: the static chain.
  std::function<std::unique_ptr<MlpChain>(torch::nn::Module& owner, const FeedForwardContext&,
                                          const std::vector<int64_t>& widths)>
      make = {};
};

const std::vector<FeedForwardKind>& feed_forward_kinds();
const FeedForwardKind& feed_forward_kind(const std::string& name);  // ConfigError with did-you-mean
// The chain of the context's kind for a layer whose MLP budget is d_ff, registered in `owner`.
std::unique_ptr<MlpChain> make_feed_forward(torch::nn::Module& owner, const FeedForwardContext& ctx, int64_t d_ff);

}  // namespace ember
