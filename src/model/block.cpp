#include "ember/model/block.h"

#include <cmath>

namespace ember {

Block::Block(const ModelConfig& cfg, int64_t d_ff) {
  mixer_norm_ = register_module("mixer_norm", std::make_shared<RMSNorm>(cfg.d_model, cfg.norm_eps));
  mixer_ = register_module("mixer", make_mixer(cfg));
  mlp_norm_ = register_module("mlp_norm", std::make_shared<RMSNorm>(cfg.d_model, cfg.norm_eps));
  const double out_std =
      cfg.scale_residual_init ? cfg.init_std / std::sqrt(2.0 * cfg.n_layers) : cfg.init_std;
  mlp_ = register_module("mlp", std::make_shared<SwiGLU>(cfg.d_model, d_ff, cfg.init_std, out_std));
}

at::Tensor Block::forward(const at::Tensor& x, const Rope& rope) {
  auto h = x + mixer_->forward(mixer_norm_->forward(x), rope);
  return h + mlp_->forward(mlp_norm_->forward(h));
}

}  // namespace ember
