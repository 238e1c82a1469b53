#include "ember/model/block.h"

namespace ember {

Block::Block(const ModelConfig& cfg, int64_t layer, int64_t d_ff) {
  const MixerContext ctx = mixer_context(cfg, layer);
  mixer_norm_ = register_module("mixer_norm", std::make_shared<RMSNorm>(cfg.d_model, cfg.norm_eps));
  mixer_ = register_module("mixer", make_mixer(ctx));
  const auto widths = block_mlp_widths(ctx, d_ff);
  for (size_t l = 0; l < widths.size(); ++l) {
    const std::string suffix = l == 0 ? "" : "_" + std::to_string(l);  // one MLP keeps the plain names
    mlp_norms_.push_back(
        register_module("mlp_norm" + suffix, std::make_shared<RMSNorm>(cfg.d_model, cfg.norm_eps)));
    mlps_.push_back(register_module(
        "mlp" + suffix, std::make_shared<SwiGLU>(cfg.d_model, widths[l], cfg.init_std, ctx.out_std)));
  }
}

at::Tensor Block::mlp_chain(const at::Tensor& h) {
  auto x = h;
  for (size_t l = 0; l < mlps_.size(); ++l) x = x + mlps_[l]->forward(mlp_norms_[l]->forward(x));
  return x;
}

at::Tensor Block::forward(const at::Tensor& x, const Rope& rope, BlockTrace* trace) {
  auto normed = mixer_norm_->forward(x);
  auto mixed = mixer_->forward(normed, rope);
  auto h = x + mixed;
  auto out = mlp_chain(h);
  if (trace) *trace = {x, mixed, h, out - h, normed};
  return out;
}

at::Tensor Block::decode(const at::Tensor& x, const Rope& rope, std::unique_ptr<MixerState>& state) {
  return mlp_chain(x + mixer_->decode(mixer_norm_->forward(x), rope, state));
}

int64_t Block::mlp_width() const {
  int64_t width = 0;
  for (const auto& mlp : mlps_) width += mlp->d_ff();
  return width;
}

double Block::activation_bytes_per_token(int64_t elem) const {
  const double width = static_cast<double>(mixer_norm_->parameters().front().size(0));
  const double norm = 8.0 * width + (elem < 4 ? static_cast<double>(elem) * width : 0.0);  // x, RMSNorm(x), cast
  double bytes = norm + mixer_->activation_bytes_per_token(elem);
  for (const auto& mlp : mlps_) bytes += norm + mlp->activation_bytes_per_token(elem);
  return bytes;
}

double Block::forward_flops_per_token(int64_t seq_len) const {
  std::vector<const torch::nn::Module*> parts{mixer_.get()};
  for (const auto& mlp : mlps_) parts.push_back(mlp.get());
  double matmul = 0;
  for (const auto* part : parts)
    for (const auto& p : part->parameters())
      if (p.dim() >= 2) matmul += static_cast<double>(p.numel());
  return 2.0 * matmul + static_cast<double>(mixer_->extra_flops_per_token(seq_len));
}

}  // namespace ember
