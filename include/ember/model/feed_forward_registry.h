// The feed-forward seam's registry: model.mlp.kind picks a row of the table in
// src/model/feed_forward_registry.cpp (kind -> description, options section, widths, chain). A kind
// turns a layer's MLP budget d_ff (the taper's width, less what the mixer takes:
// MixerKind::mlp_budget) into the block's chain of SwiGLU MLPs (model/mlp_chain.h, the seam's
// interface); its options are model.mlp.<kind>.*.
// A mixer kind may be a preset that brings its own feed-forward (hope_attention: attention + cms,
// with the chain's options in model.mixer.hope_attention.*; MixerKind::mlp_preset).
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ember/model/mlp_chain.h"
#include "ember/model/model_config.h"

namespace ember {

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
