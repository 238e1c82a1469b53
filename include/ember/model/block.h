// One pre-norm decoder block: h = x + Mixer(RMSNorm(x)); out = h + MLP(RMSNorm(h)).
#pragma once
#include <torch/nn/module.h>

#include "ember/model/mixer.h"
#include "ember/model/mlp.h"
#include "ember/model/norm.h"

namespace ember {

class Block : public torch::nn::Module {
 public:
  Block(const ModelConfig& cfg, int64_t d_ff);
  at::Tensor forward(const at::Tensor& x, const Rope& rope);
  Mixer& mixer() { return *mixer_; }
  SwiGLU& mlp() { return *mlp_; }

 private:
  std::shared_ptr<RMSNorm> mixer_norm_, mlp_norm_;
  std::shared_ptr<Mixer> mixer_;
  std::shared_ptr<SwiGLU> mlp_;
};

}  // namespace ember
