#include "ember/model/lm.h"

#include <ATen/record_function.h>

#include <algorithm>

#include "ember/model/activation_checkpoint.h"
#include "ember/model/embedding_registry.h"
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

// Each addition to the residual stream is made in the pass of the next norm (model/residual_stream.h),
// the last block's in the final norm's; a checkpointed block keeps the stream and reruns the same.
at::Tensor LanguageModel::hidden(const at::Tensor& ids) {
  const auto context = chain_context(parts(), ids);
  ResidualStream stream([&] {
    TraceScope scope("embedding");
    return embedding_->forward(ids);
  }());
  for (size_t l = 0; l < blocks_.size(); ++l) {
    Block* block = blocks_[l].get();
    TraceScope scope("layers", static_cast<int64_t>(l));
    if (!recompute_.empty() && recompute_[l])
      stream = checkpointed([block, this, context](ResidualStream& s) { block->forward(s, rope_, context); }, stream);
    else
      block->forward(stream, rope_, context);
  }
  TraceScope scope("final_norm");
  return stream.normed(*final_norm_);
}

ModelParts LanguageModel::parts() {
  return {*embedding_, blocks_, *final_norm_, head_weight(), cfg_.embedding.output_scale, rope_};
}

void LanguageModel::set_activation_checkpointing(ActivationCheckpointing mode, int64_t k) {
  recompute_.assign(blocks_.size(), false);
  for (size_t l = 0; l < blocks_.size(); ++l)
    recompute_[l] = mode == ActivationCheckpointing::full || (mode == ActivationCheckpointing::every_k &&
                                                              static_cast<int64_t>(l) % std::max<int64_t>(k, 1) == 0);
}

std::vector<BlockTrace> LanguageModel::trace(const at::Tensor& ids) {
  std::vector<BlockTrace> traces(blocks_.size());
  const auto context = chain_context(parts(), ids);
  ResidualStream stream(embedding_->forward(ids));
  for (size_t l = 0; l < blocks_.size(); ++l) blocks_[l]->forward(stream, rope_, context, &traces[l]);
  return traces;
}

at::Tensor LanguageModel::forward(const at::Tensor& ids) { return logits_of(hidden(ids)); }

at::Tensor LanguageModel::decode(const at::Tensor& ids, DecodeState& state) {
  if (state.layers.empty()) state.layers.resize(blocks_.size());
  const auto context = chain_context_decode(parts(), ids, state.position, state.context);
  ResidualStream stream(embedding_->forward(ids));
  for (size_t l = 0; l < blocks_.size(); ++l) blocks_[l]->decode(stream, rope_, state.layers[l], context);
  state.position += ids.size(1);
  return logits_of(stream.normed(*final_norm_));
}

at::Tensor LanguageModel::logits_of(const at::Tensor& hidden) const {
  auto logits = at::linear(hidden, head_weight());
  return cfg_.embedding.output_scale == 1.0 ? logits : logits * cfg_.embedding.output_scale;
}

at::Tensor LanguageModel::token_losses(const at::Tensor& ids, const at::Tensor& targets) {
  check_token_ids(targets, cfg_.vocab_size, "loss targets");
  auto h = hidden(ids);
  return linear_cross_entropy_per_row(h.reshape({-1, h.size(-1)}), head_weight(), targets.reshape({-1}),
                                      cfg_.embedding.output_scale)
      .view(targets.sizes());
}

at::Tensor LanguageModel::loss(const at::Tensor& ids, const at::Tensor& targets) {
  check_token_ids(targets, cfg_.vocab_size, "loss targets");  // before the forward pass, not after
  return head_loss(hidden(ids), targets, {});
}

at::Tensor LanguageModel::training_loss(const at::Tensor& ids, const at::Tensor& targets, double loss_scale) {
  check_token_ids(targets, cfg_.vocab_size, "loss targets");
  auto table = embedding_->share_gradient_with_head();  // a tied table's lookup adds its rows into the head's
  return head_loss(hidden(ids), targets, {loss_scale, true, table});
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
  return 6.0 * matmul_params + 3.0 * attention + chain_context_flops_per_token(blocks_, head_weight(), seq_len);
}

double LanguageModel::causal_train_flops_per_token(int64_t seq_len) const {
  double masked = 0;
  for (const auto& b : blocks_) masked += static_cast<double>(b->mixer().causal_masked_flops_per_token(seq_len));
  return train_flops_per_token(seq_len) - 3.0 * masked;  // forward + backward, as the full count
}

}  // namespace ember
