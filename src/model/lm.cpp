#include "ember/model/lm.h"

#include <ATen/record_function.h>
#include <torch/csrc/autograd/autograd.h>

#include <algorithm>

#include "ember/model/activation_checkpoint.h"
#include "ember/model/init.h"
#include "ember/model/linear_cross_entropy.h"
#include "ember/model/nonfinite_trace.h"
#include "ember/util/profile_scopes.h"

namespace ember {

LanguageModel::LanguageModel(const ModelConfig& cfg)
    : cfg_(cfg), rope_(cfg.head_dim(), cfg.max_seq_len, cfg.mixer.rope_base, cfg.mixer.rope_scaling) {
  embedding_ = register_module("embedding", make_embedding(cfg));
  const auto widths = cfg.layer_d_ff();
  auto layers = register_module("layers", torch::nn::ModuleList());
  for (int64_t l = 0; l < cfg.n_layers; ++l) {
    blocks_.push_back(std::make_shared<Block>(cfg, l, widths[l]));
    layers->push_back(blocks_.back());
  }
  final_norm_ = register_module("final_norm", std::make_shared<RMSNorm>(cfg.d_model, cfg.norm_eps));
  if (!embedding_->tied_table().defined())
    head_ = register_module("head", std::make_shared<torch::nn::Module>("Head"))
                ->register_parameter("weight", normal_parameter({cfg.vocab_size, cfg.d_model}, cfg.init_std));
}

at::Device LanguageModel::device() const { return final_norm_->parameters().front().device(); }

at::Tensor LanguageModel::head_weight() const { return head_.defined() ? head_ : embedding_->tied_table(); }

at::Tensor LanguageModel::hidden(const at::Tensor& ids) {
  const auto feedback = feedback_for(ids);
  auto x = [&] {
    TraceScope scope("embedding");
    return embedding_->forward(ids);
  }();
  for (size_t l = 0; l < blocks_.size(); ++l) {
    Block* block = blocks_[l].get();
    TraceScope scope("layers", static_cast<int64_t>(l));
    if (!recompute_.empty() && recompute_[l])
      x = checkpointed(
          [block, this, feedback](const at::Tensor& in) { return block->forward(in, rope_, nullptr, feedback); }, x);
    else
      x = block->forward(x, rope_, nullptr, feedback);
  }
  TraceScope scope("final_norm");
  return final_norm_->forward(x);
}

FeedbackNeeds LanguageModel::feedback_needs() const {
  FeedbackNeeds needs;
  for (const auto& b : blocks_) needs += b->feedback_needs();
  return needs;
}

Feedback LanguageModel::feedback_for(const at::Tensor& ids) {
  const auto needs = feedback_needs();
  Feedback feedback;
  if (needs.first_pass) feedback.first_pass = first_pass_feedback(ids);
  if (needs.stream_reads > 0) feedback.at_stream = stream_feedback(ids, 0);
  return feedback;
}

std::function<at::Tensor(const at::Tensor&, int64_t)> LanguageModel::stream_feedback(const at::Tensor& ids,
                                                                                    int64_t first) {
  return [this, ids, first](const at::Tensor& stream, int64_t position) {
    const int64_t offset = position + 1 - first;  // where in ids the first row's target is
    const int64_t known = std::clamp<int64_t>(ids.size(1) - offset, 0, stream.size(1));
    auto gradient = at::zeros_like(stream);
    if (known > 0)
      gradient.narrow(1, 0, known).copy_(stream_gradient(stream.narrow(1, 0, known), ids.narrow(1, offset, known)));
    return gradient;
  };
}

at::Tensor LanguageModel::first_pass_feedback(const at::Tensor& ids) {
  at::Tensor stream;
  {
    at::NoGradGuard no_grad;
    stream = embedding_->forward(ids);
    for (auto& block : blocks_) stream = block->forward(stream, rope_);  // no block reads feedback
  }
  return stream_feedback(ids, 0)(stream, 0);  // the same per-token gradient, at the final stream
}

at::Tensor LanguageModel::stream_gradient(const at::Tensor& stream, const at::Tensor& targets) {
  at::AutoGradMode grad_mode(true);
  auto x = stream.detach().contiguous().requires_grad_(true);
  auto h = final_norm_->forward(x);
  auto mean = linear_cross_entropy(h.reshape({-1, h.size(-1)}), head_weight().detach(), targets.reshape({-1}),
                                   cfg_.embedding.output_scale);
  auto sum = mean * static_cast<double>(targets.numel());  // each token's own loss, not their mean
  return torch::autograd::grad({sum}, {x})[0].detach();
}

void LanguageModel::set_activation_checkpointing(ActivationCheckpointing mode, int64_t k) {
  recompute_.assign(blocks_.size(), false);
  for (size_t l = 0; l < blocks_.size(); ++l)
    recompute_[l] = mode == ActivationCheckpointing::full || (mode == ActivationCheckpointing::every_k &&
                                                              static_cast<int64_t>(l) % std::max<int64_t>(k, 1) == 0);
}

std::vector<BlockTrace> LanguageModel::trace(const at::Tensor& ids) {
  std::vector<BlockTrace> traces(blocks_.size());
  const auto feedback = feedback_for(ids);
  auto x = embedding_->forward(ids);
  for (size_t l = 0; l < blocks_.size(); ++l) x = blocks_[l]->forward(x, rope_, &traces[l], feedback);
  return traces;
}

at::Tensor LanguageModel::forward(const at::Tensor& ids) { return logits_of(hidden(ids)); }

at::Tensor LanguageModel::decode(const at::Tensor& ids, DecodeState& state) {
  if (state.layers.empty()) state.layers.resize(blocks_.size());
  const auto needs = feedback_needs();
  Feedback feedback;
  if (needs.first_pass) feedback.first_pass = decode_first_pass(ids, state);
  if (needs.stream_reads > 0) feedback.at_stream = stream_feedback(ids, state.position);
  auto x = embedding_->forward(ids);
  for (size_t l = 0; l < blocks_.size(); ++l) x = blocks_[l]->decode(x, rope_, state.layers[l], feedback);
  state.position += ids.size(1);
  return logits_of(final_norm_->forward(x));
}

// The feedback of the positions before each new token: the first pass's stream of the token before
// (kept from the last call) and of all new tokens but the last, against the new tokens.
at::Tensor LanguageModel::decode_first_pass(const at::Tensor& ids, DecodeState& state) {
  if (state.first_pass.empty()) state.first_pass.resize(blocks_.size());
  at::Tensor stream;
  {
    at::NoGradGuard no_grad;
    stream = embedding_->forward(ids);
    for (size_t l = 0; l < blocks_.size(); ++l) stream = blocks_[l]->decode(stream, rope_, state.first_pass[l]);
  }
  auto before = state.last_stream.defined() ? at::cat({state.last_stream, stream}, 1) : stream;
  auto targets = state.last_stream.defined() ? ids : ids.narrow(1, 1, ids.size(1) - 1);
  state.last_stream = stream.narrow(1, stream.size(1) - 1, 1);
  if (targets.size(1) == 0) return stream.new_zeros({stream.size(0), 0, stream.size(2)});
  return stream_gradient(before.narrow(1, 0, targets.size(1)), targets);
}

at::Tensor LanguageModel::logits_of(const at::Tensor& hidden) const {
  auto logits = at::linear(hidden, head_weight());
  return cfg_.embedding.output_scale == 1.0 ? logits : logits * cfg_.embedding.output_scale;
}

at::Tensor LanguageModel::token_losses(const at::Tensor& ids, const at::Tensor& targets) {
  auto h = hidden(ids);
  return linear_cross_entropy_per_row(h.reshape({-1, h.size(-1)}), head_weight(), targets.reshape({-1}),
                                      cfg_.embedding.output_scale)
      .view(targets.sizes());
}

at::Tensor LanguageModel::loss(const at::Tensor& ids, const at::Tensor& targets) {
  return head_loss(hidden(ids), targets, {});
}

at::Tensor LanguageModel::training_loss(const at::Tensor& ids, const at::Tensor& targets, double loss_scale) {
  return head_loss(hidden(ids), targets, {loss_scale, true});
}

at::Tensor LanguageModel::head_loss(const at::Tensor& h, const at::Tensor& targets, const LossGradient& gradient) {
  TraceScope scope("head and loss");
  RECORD_USER_SCOPE(kLossHeadScope);  // ember train --profile: the loss head's own category
  return linear_cross_entropy(h.reshape({-1, h.size(-1)}), head_weight(), targets.reshape({-1}),
                              cfg_.embedding.output_scale, /*chunk_rows=*/0, gradient);
}

int64_t LanguageModel::num_parameters() const {
  int64_t n = 0;
  for (const auto& p : parameters()) n += p.numel();
  return n;
}

int64_t LanguageModel::num_embedding_parameters() const {
  int64_t n = 0;
  for (const auto& p : embedding_->parameters()) n += p.numel();
  return n;
}

namespace {

double matrix_elements(const std::vector<torch::Tensor>& params) {
  double n = 0;
  for (const auto& p : params)
    if (p.dim() >= 2) n += static_cast<double>(p.numel());
  return n;
}

}  // namespace

double LanguageModel::train_flops_per_token(int64_t seq_len) const {
  // Every matrix but the input lookup's is a matmul weight used once per token (norm gains and
  // biases are not, as in Block::forward_flops_per_token); a tied table is also the head's weight.
  double matmul_params = matrix_elements(parameters()) - matrix_elements(embedding_->parameters());
  matmul_params += static_cast<double>(head_weight().numel()) * (head_.defined() ? 0 : 1);
  double attention = 0;
  for (const auto& b : blocks_) attention += static_cast<double>(b->mixer().extra_flops_per_token(seq_len));
  return 6.0 * matmul_params + 3.0 * attention + feedback_flops_per_token(seq_len);  // backward = 2x forward
}

// Feedback costs, per token, the head's matmul and its gradient at the stream (4 d V) per read, and
// for first-pass feedback the blocks' forward too (no backward); the chains add their own learning.
double LanguageModel::feedback_flops_per_token(int64_t seq_len) const {
  const auto needs = feedback_needs();
  const double read = 4.0 * static_cast<double>(head_weight().numel());
  double flops = read * static_cast<double>(needs.stream_reads) + (needs.first_pass ? read : 0.0);
  for (const auto& b : blocks_)
    flops += (needs.first_pass ? b->forward_flops_per_token(seq_len) : 0.0) + b->in_context_flops_per_token();
  return flops;
}

}  // namespace ember
