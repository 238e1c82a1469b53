// The token-mixer seam's interface: a mixer maps the normalised residual stream [B, T, D] to
// [B, T, D] causally. model.mixer.kind picks the kind from its registry (model/mixer_registry.h);
// each kind gets the chassis sizes and its own section of options, model.mixer.<kind>.*.
#pragma once
#include <torch/nn/module.h>

#include <memory>

#include "ember/model/autocast.h"
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
  // The part of extra_flops_per_token a causal mask hides: half of full causal attention's QK^T and
  // PV (extra_flops_per_token counts them full, PaLM's convention). Subtracted, it gives the
  // causal-halved count some peers use for MFU.
  virtual int64_t causal_masked_flops_per_token(int64_t seq_len) const { return 0; }
  // Bytes per token the mixer's forward keeps for backward, its input as its readers keep it
  // included, when activations are `elem` bytes (4 fp32, 2 under bf16 autocast): the sum of what
  // each op it calls declares (kernels/<op>.h, kernels/projections.h) and of ATen's ops' saved
  // tensors, for `ember inspect --memory`; tests/unit/test_saved_bytes.cpp measures it.
  virtual double activation_bytes_per_token(int64_t elem) const = 0;
  // The memory the mixer writes as it reads, for diagnostics; null: it keeps none (model/mixer_memory.h).
  virtual const MixerMemory* memory() const { return nullptr; }
  // Its softmax attention, for diagnostics; null: it has none (model/mixer_attention.h).
  virtual const MixerAttention* attention() const { return nullptr; }
  // How precisely forward needs its normed input (model/autocast.h): `matmul` when it reads it
  // through projections alone, so that the block's norm may write it in the autocast dtype; the
  // stream's (fp32) when anything else reads it (a convolution, a memory's update).
  virtual InputPrecision input_precision() const { return InputPrecision::stream; }
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

}  // namespace ember
