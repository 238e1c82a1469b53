// What one training process holds, estimated before a run is submitted (`ember inspect --memory`):
// fp32 parameters and gradients, AdamW's two moments (sharded over the data-parallel world with
// ZeRO-1), the bf16 copies of the matmul weights that autocast keeps during a step, the
// activations kept for backward (per block, Block::activation_bytes_per_token: the sum of what
// each op declares it saves, kernels/<op>.h beside each autograd, which
// tests/unit/test_saved_bytes.cpp measures on a CPU; with activation checkpointing, a checkpointed
// block keeps only its input and one block is rebuilt at a time) plus one block's worth of
// gradients in flight during backward, and the loss's buffers (dL/dh, dL/dW and one chunk of
// logits); with several data-parallel ranks, the flat buckets the gradients are averaged in. A first-order model: allocator slack, the CUDA context and the
// communication library's own buffers are not in it. Titans declares per row of its sequence with
// the N_p persistent rows joined and over whole chunks (model/mixers/titans/titans.h): at seq_len T
// it keeps N_p / T more (0.1% at 4096 with 4), and a short last chunk up to one more chunk's state.
#pragma once
#include <nlohmann/json.hpp>

#include "ember/config/train_config.h"
#include "ember/model/model_config.h"

namespace ember {

struct MemoryOptions {
  int64_t micro_batch = 1;
  int64_t seq_len = 1;
  Precision precision = Precision::fp32;
  ActivationCheckpointing checkpointing = ActivationCheckpointing::none;
  int64_t checkpointing_k = 2;
  int64_t zero = 0;             // 0: every rank holds the whole optimizer state; 1: ZeRO-1 shards it
  int64_t world = 1;            // data-parallel ranks
  bool grad_comm_bf16 = false;  // distributed.grad_comm: bf16 buckets
  bool gpu = false;             // the loss head's chunk budget is the GPU's (model/linear_cross_entropy.h)
};

struct MemoryEstimate {
  double parameters = 0, gradients = 0, optimizer = 0, autocast_copies = 0;
  double gradient_buckets = 0;             // world > 1: every gradient once more, in its bucket
  double activations = 0, loss = 0;        // bytes
  double activations_per_block_token = 0;  // bytes per token of one (uncheckpointed) block, on average
  double total() const {
    return parameters + gradients + optimizer + autocast_copies + gradient_buckets + activations + loss;
  }
  nlohmann::json to_json() const;
};

MemoryEstimate estimate_training_memory(const ModelConfig& model, const MemoryOptions& options);

}  // namespace ember
