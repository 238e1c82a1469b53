#include "ember/model/block.h"

#include "ember/model/autocast.h"
#include "ember/model/feed_forward_registry.h"
#include "ember/model/mixer_registry.h"
#include "ember/model/nonfinite_trace.h"

#include <optional>
#include <tuple>

namespace ember {

Block::Block(const ModelConfig& cfg, int64_t layer, int64_t d_ff) {
  const MixerContext ctx = mixer_context(cfg, layer);
  mixer_norm_ = register_module("mixer_norm", std::make_shared<RMSNorm>(cfg.d_model, cfg.norm_eps));
  mixer_ = register_module("mixer", make_mixer(ctx));
  const auto feed_forward = feed_forward_choice(cfg);
  chain_ = make_feed_forward(*this, feed_forward_context(cfg, layer, feed_forward), mixer_mlp_budget(ctx, d_ff));
}

at::Tensor Block::forward(const at::Tensor& x, const Rope& rope, BlockTrace* trace, const ChainContext& context) {
  if (!trace) {
    const auto [stream, last] = forward_unadded(x, {}, rope, context);
    return stream + last;
  }
  at::Tensor normed, mixed, h;  // h = x + mixed, added in the chain's first norm
  {
    TraceScope scope("mixer");
    normed = mixer_norm_->forward(x);
    mixed = mixer_->forward(normed, rope);
  }
  auto out = chain_->forward(x, mixed, context, nullptr, &h);
  *trace = {x, mixed, h, out - h, normed};
  return out;
}

std::pair<at::Tensor, at::Tensor> Block::forward_unadded(const at::Tensor& x, const at::Tensor& pending,
                                                         const Rope& rope, const ChainContext& context) {
  at::Tensor stream = x, normed, mixed;
  {
    TraceScope scope("mixer");
    if (pending.defined()) {
      std::optional<at::ScalarType> low;
      if (mixer_->reads_input_through_projections() && autocast_enabled(x.device())) low = autocast_dtype(x.device());
      std::tie(stream, normed) = mixer_norm_->add_forward(x, pending, low);
    } else {
      normed = mixer_norm_->forward(x);
    }
    mixed = mixer_->forward(normed, rope);
  }
  return chain_->forward_unadded(stream, mixed, context);
}

at::Tensor Block::decode(const at::Tensor& x, const Rope& rope, BlockState& state, const ChainContext& context) {
  return chain_->forward(x, mixer_->decode(mixer_norm_->forward(x), rope, state.mixer), context, &state.chain);
}

double Block::activation_bytes_per_token(int64_t elem) const {
  const int64_t width = mixer_norm_->parameters().front().size(0);
  return rmsnorm_activation_bytes_per_token(width, elem) + mixer_->activation_bytes_per_token(elem) +
         chain_->activation_bytes_per_token(elem);
}

double Block::forward_flops_per_token(int64_t seq_len) const {
  std::vector<const torch::nn::Module*> parts{mixer_.get()};
  for (const auto& mlp : chain_->mlps()) parts.push_back(mlp.get());
  double matmul = 0;
  for (const auto* part : parts)
    for (const auto& p : part->parameters())
      if (p.dim() >= 2) matmul += static_cast<double>(p.numel());
  return 2.0 * matmul + static_cast<double>(mixer_->extra_flops_per_token(seq_len));
}

}  // namespace ember
