// The token-mixer seam: model.mixer.kind picks an implementation. A mixer maps the normalised
// residual stream [B, T, D] to [B, T, D] causally.
#pragma once
#include <torch/nn/module.h>

#include <memory>

#include "ember/model/model_config.h"
#include "ember/model/rope.h"

namespace ember {

class Mixer : public torch::nn::Module {
 public:
  virtual at::Tensor forward(const at::Tensor& x, const Rope& rope) = 0;
  // Forward FLOPs per token beyond the parameter matmuls (e.g. attention scores), at length T.
  virtual int64_t extra_flops_per_token(int64_t seq_len) const = 0;
};

std::shared_ptr<Mixer> make_mixer(const ModelConfig& cfg);

}  // namespace ember
