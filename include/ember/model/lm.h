// The decoder-only language model: embedding -> L blocks -> final RMSNorm -> output head
// (tied to the embedding table, or a separate dense V x D matrix).
#pragma once
#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>

#include <memory>
#include <vector>

#include "ember/model/block.h"
#include "ember/model/embedding.h"
#include "ember/model/mixers/attention.h"
#include "ember/model/model_config.h"
#include "ember/model/rope.h"

namespace ember {

class LanguageModel : public torch::nn::Module {
 public:
  explicit LanguageModel(const ModelConfig& cfg);

  at::Tensor forward(const at::Tensor& ids);  // [B, T] -> logits [B, T, V]
  // Mean next-token cross-entropy (computed in fp32) of logits(ids) against targets [B, T].
  at::Tensor loss(const at::Tensor& ids, const at::Tensor& targets);
  at::Tensor hidden(const at::Tensor& ids);              // final-normed hidden states [B, T, D]
  std::vector<BlockTrace> trace(const at::Tensor& ids);  // per-block residual contributions

  const ModelConfig& config() const { return cfg_; }
  const Rope& rope() const { return rope_; }
  Embedding& embedding() { return *embedding_; }
  std::vector<std::shared_ptr<Block>>& blocks() { return blocks_; }
  at::Tensor head_weight() const;               // V x D; the embedding table itself when tied
  void set_attention_impl(AttentionImpl impl);  // every attention mixer (for tests)

  int64_t num_parameters() const;
  int64_t num_embedding_parameters() const;  // input side only
  // Training FLOPs per token (forward + backward): 6 N_matmul + 3 * attention score FLOPs.
  double train_flops_per_token(int64_t seq_len) const;

 private:
  ModelConfig cfg_;
  Rope rope_;
  std::shared_ptr<Embedding> embedding_;
  std::vector<std::shared_ptr<Block>> blocks_;
  std::shared_ptr<RMSNorm> final_norm_;
  at::Tensor head_;  // undefined when tied
};

}  // namespace ember
