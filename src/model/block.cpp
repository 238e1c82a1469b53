#include "ember/model/block.h"

#include <algorithm>

#include "ember/model/nonfinite_trace.h"
#include "ember/util/error.h"

namespace ember {

Block::Block(const ModelConfig& cfg, int64_t layer, int64_t d_ff) {
  const MixerContext ctx = mixer_context(cfg, layer);
  mixer_norm_ = register_module("mixer_norm", std::make_shared<RMSNorm>(cfg.d_model, cfg.norm_eps));
  mixer_ = register_module("mixer", make_mixer(ctx));
  const auto widths = block_mlp_widths(ctx, d_ff);
  for (size_t l = 0; l < widths.size(); ++l) {
    const std::string suffix = l == 0 ? "" : "_" + std::to_string(l);  // one MLP keeps the plain names
    mlp_norms_.push_back(register_module("mlp_norm" + suffix, std::make_shared<RMSNorm>(cfg.d_model, cfg.norm_eps)));
    mlps_.push_back(
        register_module("mlp" + suffix, std::make_shared<SwiGLU>(cfg.d_model, widths[l], cfg.init_std, ctx.out_std)));
  }
  updates_ = block_level_updates(ctx);
  if (!updates_.empty() && updates_.size() != mlps_.size())
    throw ConfigError("model.mixer." + cfg.mixer.kind + ": " + std::to_string(updates_.size()) +
                      " level update rules for " + std::to_string(mlps_.size()) + " MLP levels");
}

bool Block::learns_in_context() const {
  return std::any_of(updates_.begin(), updates_.end(), [](const LevelUpdate& u) { return u.learns(); });
}

int64_t Block::levels_learning_from(TeachSource source) const {
  return std::count_if(updates_.begin(), updates_.end(),
                       [source](const LevelUpdate& u) { return u.learns() && u.signal == source; });
}

at::Tensor Block::mlp_chain(const at::Tensor& h, const TeachSignal& teach, std::vector<FastSwiGLUState>* levels) {
  if (levels && levels->empty()) levels->resize(mlps_.size());
  auto x = h;
  for (size_t l = 0; l < mlps_.size(); ++l) {
    TraceScope scope(mlps_.size() == 1 ? "mlp" : "mlps", mlps_.size() == 1 ? -1 : static_cast<int64_t>(l));
    auto u = mlp_norms_[l]->forward(x);
    if (!teach.defined() || updates_.empty() || !updates_[l].learns())
      x = x + mlps_[l]->forward(u);
    else if (levels)
      x = x + fast_swiglu_decode(*mlps_[l], u, x, teach, updates_[l], (*levels)[l]);
    else
      x = x + fast_swiglu_forward(*mlps_[l], u, x, teach, updates_[l]);
  }
  return x;
}

at::Tensor Block::forward(const at::Tensor& x, const Rope& rope, BlockTrace* trace, const TeachSignal& teach) {
  at::Tensor normed, mixed;
  {
    TraceScope scope("mixer");
    normed = mixer_norm_->forward(x);
    mixed = mixer_->forward(normed, rope);
  }
  auto h = x + mixed;
  auto out = mlp_chain(h, teach, nullptr);
  if (trace) *trace = {x, mixed, h, out - h, normed};
  return out;
}

at::Tensor Block::decode(const at::Tensor& x, const Rope& rope, std::unique_ptr<MixerState>& state,
                         std::vector<FastSwiGLUState>* levels, const TeachSignal& teach) {
  return mlp_chain(x + mixer_->decode(mixer_norm_->forward(x), rope, state), levels ? teach : TeachSignal(), levels);
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
  // A level learning in context keeps each chunk's weights, per sequence, for backward (fp32, and
  // their low-precision copies under autocast): 3 d F of them per C tokens.
  for (size_t l = 0; l < updates_.size(); ++l)
    if (updates_[l].learns())
      bytes += 3.0 * width * static_cast<double>(mlps_[l]->d_ff()) * (4.0 + (elem < 4 ? elem : 0)) /
               static_cast<double>(updates_[l].chunk);
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

double Block::inner_gradient_flops_per_token() const {
  double flops = 0;
  for (size_t l = 0; l < updates_.size(); ++l)
    if (updates_[l].learns())
      flops += 8.0 * static_cast<double>(mlps_[l]->w_up().numel()) * (updates_[l].differentiate ? 3.0 : 1.0);
  return flops;
}

}  // namespace ember
