// The decoder-only language model: embedding -> L blocks -> final RMSNorm -> output head
// (tied to the embedding table, or a separate dense V x D matrix).
#pragma once
#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>

#include <memory>
#include <vector>

#include "ember/config/train_config.h"
#include "ember/model/block.h"
#include "ember/model/chain_context.h"
#include "ember/model/embedding.h"
#include "ember/model/linear_cross_entropy.h"
#include "ember/model/model_config.h"
#include "ember/model/rope.h"

namespace ember {

// The state of incremental decoding: one block state per block, the tokens seen and what the
// chains' context carries (model/chain_context.h).
struct DecodeState {
  std::vector<BlockState> layers;
  int64_t position = 0;
  ChainContextState context;
};

class LanguageModel : public torch::nn::Module {
 public:
  explicit LanguageModel(const ModelConfig& cfg);

  at::Tensor forward(const at::Tensor& ids);  // [B, T] -> logits [B, T, V]
  // Logits of the next tokens ids [B, T] of sequences whose earlier tokens `state` holds, updating
  // it (KV caches and other mixer states): the same rows forward() gives over the whole sequence.
  at::Tensor decode(const at::Tensor& ids, DecodeState& state);
  // Mean next-token cross-entropy of logits(ids) against targets [B, T], in fp32 (fp64 for an fp64
  // model), computed in chunks of rows without the whole [B T, V] logits (linear_cross_entropy.h).
  at::Tensor loss(const at::Tensor& ids, const at::Tensor& targets);
  // loss() times loss_scale (a trainer's 1 / grad_accum), for loss.backward() and nothing else: the
  // head's gradients are formed already scaled and handed on unscaled (LossGradient::root).
  at::Tensor training_loss(const at::Tensor& ids, const at::Tensor& targets, double loss_scale);
  at::Tensor hidden(const at::Tensor& ids);  // final-normed hidden states [B, T, D]
  // The next-token loss at every position [B, T] (no graph), by the same chunked computation.
  at::Tensor token_losses(const at::Tensor& ids, const at::Tensor& targets);
  std::vector<BlockTrace> trace(const at::Tensor& ids);  // per-block residual contributions

  const ModelConfig& config() const { return cfg_; }
  at::Device device() const;  // where the parameters are
  const Rope& rope() const { return rope_; }
  Embedding& embedding() { return *embedding_; }
  std::vector<std::shared_ptr<Block>>& blocks() { return blocks_; }
  at::Tensor head_weight() const;  // V x D; the embedding table itself when tied
  // Blocks whose activations are recomputed in backward (activation_checkpoint.h): none, all, or
  // every k-th.
  void set_activation_checkpointing(ActivationCheckpointing mode, int64_t k = 1);

  at::Tensor logits_of(const at::Tensor& hidden) const;  // s h W^T
  ModelParts parts();  // what the chains' context is computed from (model/chain_context.h)

  int64_t num_parameters() const;
  int64_t num_embedding_parameters() const;  // input side only
  // Training FLOPs per token (forward + backward): 6 N_matmul + 3 * attention score FLOPs, plus what
  // the chains' context adds (chain_context_flops_per_token).
  double train_flops_per_token(int64_t seq_len) const;
  // The same with causal attention's masked half left out (train_flops_per_token counts attention
  // scores in full, PaLM's convention, which ember's MFU uses).
  double causal_train_flops_per_token(int64_t seq_len) const;

 private:
  ModelConfig cfg_;
  Rope rope_;
  std::shared_ptr<Embedding> embedding_;
  std::vector<std::shared_ptr<Block>> blocks_;
  std::shared_ptr<RMSNorm> final_norm_;
  at::Tensor head_;              // undefined when tied
  std::vector<bool> recompute_;  // per block: activation checkpointing
  at::Tensor head_loss(const at::Tensor& h, const at::Tensor& targets, const LossGradient& gradient);
};

}  // namespace ember
