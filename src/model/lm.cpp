#include "ember/model/lm.h"

#include <algorithm>

#include "ember/model/activation_checkpoint.h"
#include "ember/model/init.h"
#include "ember/model/linear_cross_entropy.h"
#include "ember/model/mixers/attention.h"

namespace ember {

LanguageModel::LanguageModel(const ModelConfig& cfg)
    : cfg_(cfg), rope_(cfg.head_dim(), cfg.max_seq_len, cfg.mixer.rope_base) {
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
  auto x = embedding_->forward(ids);
  for (size_t l = 0; l < blocks_.size(); ++l) {
    Block* block = blocks_[l].get();
    if (!recompute_.empty() && recompute_[l])
      x = checkpointed([block, this](const at::Tensor& in) { return block->forward(in, rope_); }, x);
    else
      x = block->forward(x, rope_);
  }
  return final_norm_->forward(x);
}

void LanguageModel::set_activation_checkpointing(ActivationCheckpointing mode, int64_t k) {
  recompute_.assign(blocks_.size(), false);
  for (size_t l = 0; l < blocks_.size(); ++l)
    recompute_[l] = mode == ActivationCheckpointing::full || (mode == ActivationCheckpointing::every_k &&
                                                              static_cast<int64_t>(l) % std::max<int64_t>(k, 1) == 0);
}

std::vector<BlockTrace> LanguageModel::trace(const at::Tensor& ids) {
  std::vector<BlockTrace> traces(blocks_.size());
  auto x = embedding_->forward(ids);
  for (size_t l = 0; l < blocks_.size(); ++l) x = blocks_[l]->forward(x, rope_, &traces[l]);
  return traces;
}

at::Tensor LanguageModel::forward(const at::Tensor& ids) { return logits_of(hidden(ids)); }

at::Tensor LanguageModel::decode(const at::Tensor& ids, DecodeState& state) {
  if (state.layers.empty()) state.layers.resize(blocks_.size());
  auto x = embedding_->forward(ids);
  for (size_t l = 0; l < blocks_.size(); ++l) x = blocks_[l]->decode(x, rope_, state.layers[l]);
  state.position += ids.size(1);
  return logits_of(final_norm_->forward(x));
}

at::Tensor LanguageModel::logits_of(const at::Tensor& hidden) const {
  auto logits = at::linear(hidden, head_weight());
  return cfg_.embedding.output_scale == 1.0 ? logits : logits * cfg_.embedding.output_scale;
}

at::Tensor LanguageModel::token_losses(const at::Tensor& ids, const at::Tensor& targets) {
  auto h = hidden(ids);
  return linear_cross_entropy_per_row(h.reshape({-1, h.size(-1)}), head_weight(), targets.reshape({-1}),
                                      cfg_.embedding.output_scale, loss_chunk_rows_)
      .view(targets.sizes());
}

at::Tensor LanguageModel::loss(const at::Tensor& ids, const at::Tensor& targets) {
  auto h = hidden(ids);
  return linear_cross_entropy(h.reshape({-1, h.size(-1)}), head_weight(), targets.reshape({-1}),
                              cfg_.embedding.output_scale, loss_chunk_rows_);
}

void LanguageModel::set_attention_impl(AttentionImpl impl) {
  for (auto& b : blocks_)
    if (auto* attn = dynamic_cast<Attention*>(&b->mixer())) attn->set_impl(impl);
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

double LanguageModel::train_flops_per_token(int64_t seq_len) const {
  // Every parameter except the input lookup is a matmul weight used once per token; a tied
  // table is also the head's matmul weight.
  double matmul_params = static_cast<double>(num_parameters() - num_embedding_parameters());
  matmul_params += static_cast<double>(head_weight().numel()) * (head_.defined() ? 0 : 1);
  double attention = 0;
  for (const auto& b : blocks_) attention += static_cast<double>(b->mixer().extra_flops_per_token(seq_len));
  return 6.0 * matmul_params + 3.0 * attention;  // backward costs twice the forward
}

}  // namespace ember
