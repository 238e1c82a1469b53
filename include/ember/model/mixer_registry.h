// The token-mixer seam's registry: model.mixer.kind picks a row of the table in
// src/model/mixer_registry.cpp (kind -> description, options section, factory), which builds the
// kind's Mixer (model/mixer.h) from the chassis sizes and its own section, model.mixer.<kind>.*.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ember/model/mixer.h"

namespace ember {

struct MixerKind {
  std::string name;
  std::string description;                                             // one line, for --help, inspect and errors
  std::function<std::unique_ptr<KindOptions>()> default_options = {};  // empty: the kind has no options
  std::vector<std::string> reads = {};  // other kinds whose sections it reads (albert: {"lev"})
  std::function<std::shared_ptr<Mixer>(const MixerContext&)> make = {};
  // The MLP budget left to the block's feed-forward (model/feed_forward_registry.h) of a layer whose
  // taper width is d_ff, when the mixer pays for parameters of its own from it (gated attention's
  // gate); empty: d_ff.
  std::function<int64_t(const MixerContext&, int64_t d_ff)> mlp_budget = {};
  // A preset that brings its own feed-forward: model.mlp's kind and options as the kind has them
  // (hope_attention: cms, from its own section); empty: model.mlp decides.
  std::function<KindChoice(const MixerConfig&)> mlp_preset = {};
  // For kinds that are softmax attention as Llama has it: the gate on each head's output (none,
  // elementwise or headwise), what a Hugging Face export writes; empty: the kind has no such
  // counterpart and does not export.
  std::function<std::string(const MixerContext&)> attention_gate = {};
};

const std::vector<MixerKind>& mixer_kinds();
const MixerKind& mixer_kind(const std::string& name);  // ConfigError with did-you-mean
std::shared_ptr<Mixer> make_mixer(const MixerContext& ctx);
int64_t mixer_mlp_budget(const MixerContext& ctx, int64_t d_ff);  // MixerKind::mlp_budget, or d_ff

}  // namespace ember
