#include "ember/model/block.h"

#include "ember/model/autocast.h"
#include "ember/model/feed_forward_registry.h"
#include "ember/model/mixer_registry.h"
#include "ember/model/nonfinite_trace.h"

#include <utility>

namespace ember {

Block::Block(const ModelConfig& cfg, int64_t layer, int64_t d_ff) {
  const MixerContext ctx = mixer_context(cfg, layer);
  mixer_norm_ = register_module("mixer_norm", std::make_shared<RMSNorm>(cfg.d_model, cfg.norm_eps));
  mixer_ = register_module("mixer", make_mixer(ctx));
  const auto feed_forward = feed_forward_choice(cfg);
  chain_ = make_feed_forward(*this, feed_forward_context(cfg, layer, feed_forward), mixer_mlp_budget(ctx, d_ff));
}

void Block::forward(ResidualStream& stream, const Rope& rope, const ChainContext& context, BlockTrace* trace) {
  run(stream, rope, context, nullptr, trace);
}

at::Tensor Block::forward(const at::Tensor& x, const Rope& rope, const ChainContext& context) {
  ResidualStream stream(x);
  run(stream, rope, context, nullptr, nullptr);
  return stream.sum();
}

void Block::decode(ResidualStream& stream, const Rope& rope, BlockState& state, const ChainContext& context) {
  run(stream, rope, context, &state, nullptr);
}

void Block::run(ResidualStream& stream, const Rope& rope, const ChainContext& context, BlockState* decoding,
                BlockTrace* trace) {
  {
    TraceScope scope("mixer");
    const auto y_type = normed_dtype(mixer_->input_precision(), stream.stream().device());
    const auto normed = stream.normed(*mixer_norm_, y_type);
    auto mixed = decoding ? mixer_->decode(normed, rope, decoding->mixer) : mixer_->forward(normed, rope);
    if (trace) *trace = {stream.stream(), mixed, stream.stream() + mixed, {}, normed};
    stream.add(std::move(mixed));
  }
  chain_->forward(stream, context, decoding ? &decoding->chain : nullptr);
  if (trace) trace->mlp_out = stream.sum() - trace->mlp_residual;
}

double Block::activation_bytes_per_token(int64_t elem) const {
  return static_cast<double>(mixer_norm_->saved_bytes_per_token()) + mixer_->activation_bytes_per_token(elem) +
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
