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

at::Tensor Block::forward(const at::Tensor& x, const Rope& rope, BlockTrace* trace) {
  auto normed = mixer_norm_->forward(x);
  auto mixed = mixer_->forward(normed, rope);
  auto h = x + mixed;
  auto m = mlp_->forward(mlp_norm_->forward(h));
  if (trace) *trace = {x, mixed, h, m, normed};
  return h + m;
}

double Block::forward_flops_per_token(int64_t seq_len) const {
  double matmul = 0;
  for (const auto* part : {static_cast<const torch::nn::Module*>(mixer_.get()),
                           static_cast<const torch::nn::Module*>(mlp_.get())})
    for (const auto& p : part->parameters())
      if (p.dim() >= 2) matmul += static_cast<double>(p.numel());
  return 2.0 * matmul + static_cast<double>(mixer_->extra_flops_per_token(seq_len));
}

}  // namespace ember
