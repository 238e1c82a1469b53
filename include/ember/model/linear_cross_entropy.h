// The language-model loss without the [N, V] logits: mean_i CE(s h_i W^T, y_i), computed over
// chunks of rows, each chunk's gradient formed in its forward pass and folded at once into dL/dh
// and dL/dW (kernels/xent.h: the op, its autograd, the fused pass and its ATen path). Matmuls run
// in the autocast dtype when autocast is on (bf16), else in the promoted dtype of h and W; softmax
// and log-sum-exp in fp32 (fp64 for fp64 inputs). Without a graph (evaluation) only the loss is
// formed. A row holding a non-finite logit (+inf, -inf or NaN) has a NaN loss on every path and
// device, so that train.on_nonfinite sees it.
//
// Targets equal to ignore_index (-100 by default, as in F.cross_entropy: padding, masked prompt
// tokens) count for nothing: their rows have loss 0 and no gradient, whatever their logits, and the
// mean is over the other rows (the count is read on the device on a GPU: no host sync). A batch
// whose targets are all ignored has loss 0 and zero gradients. Any other target outside [0, V) is
// an error on a CPU and a NaN loss on a GPU. The mean is per call: a trainer's factor (1 /
// grad_accum) and an all-reduce's average over ranks then weight each call equally, not each
// counted row, which is the same thing when every call counts as many rows (ember's trainer never
// ignores a target). A token-weighted mean over a whole step would pass factor = (this call's
// counted rows) / (the step's) instead.
#pragma once
#include <memory>

#include "ember/model/tied_gradient.h"
#include <ATen/ATen.h>

namespace ember {

inline constexpr int64_t kIgnoreIndex = -100;  // F.cross_entropy's default ignore_index

// The loss of every row, [N] (no graph): per-token losses for evaluations such as frequency buckets;
// 0 for an ignored row.
at::Tensor linear_cross_entropy_per_row(const at::Tensor& hidden, const at::Tensor& weight, const at::Tensor& targets,
                                        double scale = 1.0, int64_t chunk_rows = 0,
                                        int64_t ignore_index = kIgnoreIndex);

// The mean loss with its gradients d(mean)/dh [N, D] and d(mean)/dW [V, D] (in h's and W's dtypes),
// formed in one chunked pass without a graph: what the autograd function keeps, for bindings that
// supply their own backward (python/csrc).
struct LinearCrossEntropyParts {
  at::Tensor loss, grad_hidden, grad_weight;
};
LinearCrossEntropyParts linear_cross_entropy_parts(const at::Tensor& hidden, const at::Tensor& weight,
                                                   const at::Tensor& targets, double scale = 1.0,
                                                   int64_t chunk_rows = 0, int64_t ignore_index = kIgnoreIndex);

// How the loss's gradient is to be formed. factor multiplies the loss and its gradients (a
// trainer's 1 / grad_accum). root: the gradients are handed on in place, as formed, when the
// gradient the loss receives in backward is exactly 1 (loss.backward(), loss + aux): no pass over
// the [V, D] weight gradient to scale it. Any other (0.5 * loss) scales them in place, a pass over
// [N, D] and [V, D], decided on the device (no host sync). The gradients are formed once: backward
// through the loss once, not with retain_graph twice.
struct LossGradient {
  double factor = 1.0;
  bool root = false;
  // With root: where the weight's gradient is left for a tied table's lookup, which recorded its
  // forward before, to add its rows into in place and hand on (model/tied_gradient.h); null: none.
  std::shared_ptr<TiedTableGradient> table;
};

// hidden [N, D], weight [V, D], targets [N] (int64) -> the mean loss over the counted rows times
// gradient.factor (a scalar, fp32 or fp64).
at::Tensor linear_cross_entropy(const at::Tensor& hidden, const at::Tensor& weight, const at::Tensor& targets,
                                double scale = 1.0, int64_t chunk_rows = 0, const LossGradient& gradient = {},
                                int64_t ignore_index = kIgnoreIndex);

}  // namespace ember
