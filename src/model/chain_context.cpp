#include "ember/model/chain_context.h"

#include <torch/csrc/autograd/autograd.h>

#include <algorithm>

#include "ember/model/linear_cross_entropy.h"

namespace ember {
namespace {

// d loss_t / d stream_t for final streams [B, n, D] against targets [B, n] (summed, not averaged).
at::Tensor stream_gradient(const ModelParts& parts, const at::Tensor& stream, const at::Tensor& targets) {
  at::AutoGradMode grad_mode(true);
  auto x = stream.detach().contiguous().requires_grad_(true);
  auto h = parts.final_norm.forward(x);
  auto mean = linear_cross_entropy(h.reshape({-1, h.size(-1)}), parts.head_weight.detach(), targets.reshape({-1}),
                                   parts.output_scale);
  auto sum = mean * static_cast<double>(targets.numel());  // each token's own loss, not their mean
  return torch::autograd::grad({sum}, {x})[0].detach();
}

// TeachSignal::at_stream for ids that start at position `first`: against the targets ids[q + 1 - first].
std::function<at::Tensor(const at::Tensor&, int64_t)> stream_signal(const ModelParts& parts, const at::Tensor& ids,
                                                                    int64_t first) {
  return [parts, ids, first](const at::Tensor& stream, int64_t position) {
    const int64_t offset = position + 1 - first;  // where in ids the first row's target is
    const int64_t known = std::clamp<int64_t>(ids.size(1) - offset, 0, stream.size(1));
    auto gradient = at::zeros_like(stream);
    if (known > 0)
      gradient.narrow(1, 0, known)
          .copy_(stream_gradient(parts, stream.narrow(1, 0, known), ids.narrow(1, offset, known)));
    return gradient;
  };
}

// The first pass of decoding: the streams of the positions before each new token, the one before
// (kept from the last call) and all new ones but the last, against the new tokens.
at::Tensor decode_first_pass(const ModelParts& parts, const at::Tensor& ids, ChainContextState& state) {
  if (state.first_pass.empty()) state.first_pass.resize(parts.blocks.size());
  at::Tensor stream;
  {
    at::NoGradGuard no_grad;
    ResidualStream residual(parts.embedding.forward(ids));
    for (size_t l = 0; l < parts.blocks.size(); ++l) parts.blocks[l]->decode(residual, parts.rope, state.first_pass[l]);
    stream = residual.sum();
  }
  auto before = state.last_stream.defined() ? at::cat({state.last_stream, stream}, 1) : stream;
  auto targets = state.last_stream.defined() ? ids : ids.narrow(1, 1, ids.size(1) - 1);
  state.last_stream = stream.narrow(1, stream.size(1) - 1, 1);
  if (targets.size(1) == 0) return stream.new_zeros({stream.size(0), 0, stream.size(2)});
  return stream_gradient(parts, before.narrow(1, 0, targets.size(1)), targets);
}

}  // namespace

TeachNeeds teach_needs(const std::vector<std::shared_ptr<Block>>& blocks) {
  TeachNeeds needs;
  for (const auto& b : blocks) needs += b->chain().teach_needs();
  return needs;
}

at::Tensor first_pass_teach_signal(const ModelParts& parts, const at::Tensor& ids) {
  at::Tensor stream;
  {
    at::NoGradGuard no_grad;
    stream = parts.embedding.forward(ids);
    for (const auto& block : parts.blocks) stream = block->forward(stream, parts.rope);  // no chain learns
  }
  return stream_signal(parts, ids, 0)(stream, 0);  // the same per-token gradient, at the final stream
}

ChainContext chain_context(const ModelParts& parts, const at::Tensor& ids) {
  const auto needs = teach_needs(parts.blocks);
  ChainContext context;
  if (needs.first_pass) context.teach.first_pass = first_pass_teach_signal(parts, ids);
  if (needs.stream_reads > 0) context.teach.at_stream = stream_signal(parts, ids, 0);
  return context;
}

ChainContext chain_context_decode(const ModelParts& parts, const at::Tensor& ids, int64_t position,
                                  ChainContextState& state) {
  const auto needs = teach_needs(parts.blocks);
  ChainContext context;
  if (needs.first_pass) context.teach.first_pass = decode_first_pass(parts, ids, state);
  if (needs.stream_reads > 0) context.teach.at_stream = stream_signal(parts, ids, position);
  return context;
}

double chain_context_flops_per_token(const std::vector<std::shared_ptr<Block>>& blocks, const at::Tensor& head_weight,
                                     int64_t seq_len) {
  const auto needs = teach_needs(blocks);
  const double read = 4.0 * static_cast<double>(head_weight.numel());
  double flops = read * static_cast<double>(needs.stream_reads) + (needs.first_pass ? read : 0.0);
  for (const auto& b : blocks)
    flops += (needs.first_pass ? b->forward_flops_per_token(seq_len) : 0.0) + b->chain().in_context_flops_per_token();
  return flops;
}

}  // namespace ember
