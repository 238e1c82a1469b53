// What the blocks' feed-forward chains read besides their input (ChainContext, model/mlp_chain.h),
// made for each pass of a model from its parts: the next-token teach signal (model/teach_signal.h)
// of chains that learn in context, through the final norm and the head, and only what they ask for.
#pragma once
#include <memory>
#include <vector>

#include "ember/model/block.h"
#include "ember/model/embedding.h"
#include "ember/model/norm.h"
#include "ember/model/rope.h"

namespace ember {

// The parts of a language model the context is computed from (model/lm.h).
struct ModelParts {
  Embedding& embedding;
  const std::vector<std::shared_ptr<Block>>& blocks;
  RMSNorm& final_norm;
  at::Tensor head_weight;  // V x D
  double output_scale;
  const Rope& rope;
};

// What decoding carries for the context: the first, static pass's block states and its final
// stream of the last token, whose teach signal waits for the next token's id.
struct ChainContextState {
  std::vector<BlockState> first_pass;
  at::Tensor last_stream;  // [B, 1, D]
};

TeachNeeds teach_needs(const std::vector<std::shared_ptr<Block>>& blocks);  // what the chains read
// The context of a pass over ids [B, T].
ChainContext chain_context(const ModelParts& parts, const at::Tensor& ids);
// The context of decoding the next tokens ids [B, T] of sequences at `position`, updating `state`.
ChainContext chain_context_decode(const ModelParts& parts, const at::Tensor& ids, int64_t position,
                                  ChainContextState& state);
// TeachSignal::first_pass for ids: from a first pass in which no chain learns, d loss_t / d x_L,t
// at the final stream; it depends on ids_0..ids_{t+1} only.
at::Tensor first_pass_teach_signal(const ModelParts& parts, const at::Tensor& ids);
// Forward + backward FLOPs per token of the context and of the learning in context it feeds:
// the head's matmul and its gradient at the stream (4 d V) per read; for the first pass also the
// blocks' forward (no backward); and the chains' own inner steps. 0 when no chain learns.
double chain_context_flops_per_token(const std::vector<std::shared_ptr<Block>>& blocks, const at::Tensor& head_weight,
                                     int64_t seq_len);

}  // namespace ember
