// The language-model loss without the [N, V] logits: mean_i CE(s h_i W^T, y_i), computed over
// chunks of rows. The forward pass of each chunk also forms its gradient, (softmax - onehot) / N,
// and folds it at once into dL/dh (the chunk's rows) and dL/dW (accumulated), so at most one
// chunk of logits exists at a time and backward only scales the two stored gradients by the
// incoming one. Matmuls run in the autocast dtype when autocast is on (bf16), softmax and
// log-sum-exp in fp32 (fp64 for fp64 inputs). Without a graph (evaluation) only the loss is formed.
#pragma once
#include <ATen/ATen.h>

namespace ember {

// The loss of every row, [N] (no graph): per-token losses for evaluations such as frequency buckets.
at::Tensor linear_cross_entropy_per_row(const at::Tensor& hidden, const at::Tensor& weight, const at::Tensor& targets,
                                        double scale = 1.0, int64_t chunk_rows = 0);

// Bytes of fp32 logits one chunk may take: 256 MiB on a CPU (a chunk stays near the caches), 4 GiB on
// a GPU, where every chunk re-reads and re-writes the V x D weight gradient and small chunks make
// thin matmuls (at V = 200k, 256 MiB is 334 rows: 50 chunks and ~250 GB of traffic per 16k tokens).
int64_t cross_entropy_budget_bytes(bool gpu);

// Rows of logits per chunk so that one chunk of fp32 logits takes about `budget_bytes`.
int64_t cross_entropy_chunk_rows(int64_t vocab, int64_t budget_bytes = cross_entropy_budget_bytes(false));

// The chunk that splits `rows` evenly into as few chunks of at most `max_rows` as possible.
int64_t balanced_chunk_rows(int64_t rows, int64_t max_rows);

// The mean loss with its gradients d(mean)/dh [N, D] and d(mean)/dW [V, D] (in h's and W's dtypes),
// formed in one chunked pass without a graph: what the autograd function keeps, for bindings that
// supply their own backward (python/csrc).
struct LinearCrossEntropyParts {
  at::Tensor loss, grad_hidden, grad_weight;
};
LinearCrossEntropyParts linear_cross_entropy_parts(const at::Tensor& hidden, const at::Tensor& weight,
                                                   const at::Tensor& targets, double scale = 1.0,
                                                   int64_t chunk_rows = 0);

// hidden [N, D], weight [V, D], targets [N] (int64) -> the mean loss (a scalar, fp32 or fp64).
at::Tensor linear_cross_entropy(const at::Tensor& hidden, const at::Tensor& weight, const at::Tensor& targets,
                                double scale = 1.0, int64_t chunk_rows = 0);

}  // namespace ember
