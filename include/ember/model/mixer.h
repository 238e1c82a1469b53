// The token-mixer seam: model.mixer.kind picks a row of the mixer registry (the table in
// src/model/mixer.cpp: kind -> description, options section, factory). A mixer maps the
// normalised residual stream [B, T, D] to [B, T, D] causally. Each kind gets the chassis sizes
// and its own section of options, model.mixer.<kind>.*.
#pragma once
#include <torch/nn/module.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ember/model/model_config.h"
#include "ember/model/rope.h"

namespace ember {

class MixerMemory;     // model/mixer_memory.h
class MixerAttention;  // model/mixer_attention.h

// What a mixer carries from one decoding call to the next for a batch of sequences (a KV cache, a
// convolution window, a memory state); the mixer makes it on the first call.
struct MixerState {
  virtual ~MixerState() = default;
  int64_t position = 0;  // tokens seen so far
};

class Mixer : public torch::nn::Module {
 public:
  virtual at::Tensor forward(const at::Tensor& x, const Rope& rope) = 0;
  // The outputs for the next T tokens x [B, T, D] of sequences whose earlier tokens `state` holds
  // (null: none yet), updating it: the same rows as forward() over the whole sequence gives.
  virtual at::Tensor decode(const at::Tensor& x, const Rope& rope, std::unique_ptr<MixerState>& state) = 0;
  // Forward FLOPs per token beyond the parameter matmuls (e.g. attention scores), at length T.
  virtual int64_t extra_flops_per_token(int64_t seq_len) const = 0;
  // Bytes per token the mixer's forward keeps for backward, its input excepted (the block counts
  // that), when activations are `elem` bytes (4 fp32, 2 under bf16 autocast): for `ember inspect --memory`.
  virtual double activation_bytes_per_token(int64_t elem) const = 0;
  // The memory the mixer writes as it reads, for diagnostics; null: it keeps none (model/mixer_memory.h).
  virtual const MixerMemory* memory() const { return nullptr; }
  // Its softmax attention, for diagnostics; null: it has none (model/mixer_attention.h).
  virtual const MixerAttention* attention() const { return nullptr; }
  // Whether forward reads its input only through projections, which cast it to the autocast dtype
  // anyway: the block's norm then writes it in that dtype (model/norm.h). False keeps it fp32.
  virtual bool reads_input_through_projections() const { return false; }
};

// What every mixer is built from: the chassis sizes of its layer and the seam's config (a factory
// passes its component only its own section).
struct MixerContext {
  int64_t d_model = 0, n_heads = 0, n_kv_heads = 0, head_dim = 0;
  int64_t layer = 0, n_layers = 1, max_seq_len = 0;
  double init_std = 0.02;
  double out_std = 0.02;  // the output projection's std (scaled by 1/sqrt(2L) when asked)
  double norm_eps = 1e-6;  // eps of any RMSNorm inside the mixer
  const MixerConfig& config;
};
MixerContext mixer_context(const ModelConfig& cfg, int64_t layer);

struct MixerKind {
  std::string name;
  std::string description;                                             // one line, for --help, inspect and errors
  std::function<std::unique_ptr<KindOptions>()> default_options = {};  // empty: the kind has no options
  std::vector<std::string> reads = {};  // other kinds whose sections it reads (albert: {"lev"})
  std::function<std::shared_ptr<Mixer>(const MixerContext&)> make = {};
  // The MLP budget left to the block's feed-forward (model/feed_forward.h) of a layer whose taper
  // width is d_ff, when the mixer pays for parameters of its own from it (gated attention's gate);
  // empty: d_ff.
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
