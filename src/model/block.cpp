#include "ember/model/block.h"

namespace ember {

Block::Block(const ModelConfig& cfg, int64_t layer, int64_t d_ff) {
  const MixerContext ctx = mixer_context(cfg, layer);
  mixer_norm_ = register_module("mixer_norm", std::make_shared<RMSNorm>(cfg.d_model, cfg.norm_eps));
  mixer_ = register_module("mixer", make_mixer(ctx));
  mlp_norm_ = register_module("mlp_norm", std::make_shared<RMSNorm>(cfg.d_model, cfg.norm_eps));
  mlp_ = register_module("mlp", std::make_shared<SwiGLU>(cfg.d_model, d_ff, cfg.init_std, ctx.out_std));
}

at::Tensor Block::forward(const at::Tensor& x, const Rope& rope, BlockTrace* trace) {
  auto normed = mixer_norm_->forward(x);
  auto mixed = mixer_->forward(normed, rope);
  auto h = x + mixed;
  auto m = mlp_->forward(mlp_norm_->forward(h));
  if (trace) *trace = {x, mixed, h, m, normed};
  return h + m;
}

at::Tensor Block::decode(const at::Tensor& x, const Rope& rope, std::unique_ptr<MixerState>& state) {
  auto h = x + mixer_->decode(mixer_norm_->forward(x), rope, state);
  return h + mlp_->forward(mlp_norm_->forward(h));
}

double Block::activation_bytes_per_token(int64_t elem) const {
  const double width = static_cast<double>(mixer_norm_->parameters().front().size(0));
  const double norm = 8.0 * width + (elem < 4 ? static_cast<double>(elem) * width : 0.0);  // x, RMSNorm(x), cast
  return 2 * norm + mixer_->activation_bytes_per_token(elem) + mlp_->activation_bytes_per_token(elem);
}

double Block::forward_flops_per_token(int64_t seq_len) const {
  double matmul = 0;
  for (const auto* part :
       {static_cast<const torch::nn::Module*>(mixer_.get()), static_cast<const torch::nn::Module*>(mlp_.get())})
    for (const auto& p : part->parameters())
      if (p.dim() >= 2) matmul += static_cast<double>(p.numel());
  return 2.0 * matmul + static_cast<double>(mixer_->extra_flops_per_token(seq_len));
}

}  // namespace ember
