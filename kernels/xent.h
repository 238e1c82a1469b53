// The loss head as the model calls it (model/linear_cross_entropy.h says what it means):
// mean_i CE(s h_i W^T, y_i) over chunks of rows, with its autograd, never holding the [N, V] logits.
// The forward pass of each chunk also forms its gradient, (softmax - onehot) s f / N, and folds it
// at once into dL/dh (the chunk's rows) and dL/dW (accumulated), so at most one chunk of logits
// exists at a time and backward only scales the two stored gradients by the incoming one. Matmuls
// run in the dtype the caller names (the autocast dtype under autocast), softmax and log-sum-exp
// in fp32 (fp64 for fp64 inputs), whatever autocast says. Without a graph only the loss is formed.
//
// Each chunk of logits stays in the matmul dtype: one fused pass over its rows (math:
// kernels/xent_rows.h; the CPU loops, kernels/xent_cpu_loops.h, or the CUDA kernel,
// kernels/xent_cuda.cu) reads it for the row's log-sum-exp and turns it into its gradient in place,
// the input gradient is one GEMM into its rows and the weight gradient one GEMM accumulated into
// fp32 (beta 1). kernels.loss_head = aten (ember/kernels/kernel_choice.h) uses ATen ops for that
// pass instead: fp32 copy, log_softmax, exp, scatter, scale, cast. A row holding a non-finite logit
// (+inf, -inf or NaN) has a NaN loss on either path and every device.
#pragma once
#include <ATen/ATen.h>

#include <functional>

namespace ember::xent {

// What the loss is of: the dtype of the logits' GEMMs, s, the rows per chunk (0: the device's
// budget, chunk_budget_bytes) and the target that counts for nothing.
struct Head {
  at::ScalarType matmul = at::kFloat;
  double scale = 1.0;
  int64_t chunk_rows = 0;
  int64_t ignore_index = -100;
};

// How the gradient is formed (model/linear_cross_entropy.h, LossGradient): factor f multiplies the
// loss and its gradients; root: the gradients go on in place, scaled in place only when the
// gradient the loss receives is not exactly 1 (decided on the device). take_weight_gradient, with
// root: called in backward with dL/dW, which autograd then does not get (a tied table's lookup
// adds its rows into it in place and hands on the sum); empty: autograd gets it.
struct Gradient {
  double factor = 1.0;
  bool root = false;
  std::function<void(at::Tensor)> take_weight_gradient;
};

// hidden [N, D], weight [V, D], targets [N] (int64) -> the mean loss over the counted rows times
// factor (a scalar, fp32 or fp64), with a graph when grad mode is on and hidden or weight needs it.
at::Tensor loss(const at::Tensor& hidden, const at::Tensor& weight, const at::Tensor& targets, const Head& head,
                const Gradient& gradient = {});
// The loss of every row, [N] (no graph); 0 for an ignored row.
at::Tensor loss_per_row(const at::Tensor& hidden, const at::Tensor& weight, const at::Tensor& targets,
                        const Head& head);
// The mean loss with its gradients d(mean)/dh [N, D] and d(mean)/dW [V, D] (in h's and W's dtypes),
// formed in one chunked pass without a graph: what the autograd function keeps.
struct Parts {
  at::Tensor loss, grad_hidden, grad_weight;
};
Parts loss_parts(const at::Tensor& hidden, const at::Tensor& weight, const at::Tensor& targets, const Head& head);

// Bytes of logits one chunk may take: 256 MiB on a CPU (a chunk stays near the caches), 4 GiB on
// a GPU, where every chunk re-reads and re-writes the V x D weight gradient and small chunks make
// thin matmuls (at V = 200k, 256 MiB is 334 rows: 50 chunks and ~250 GB of traffic per 16k tokens).
int64_t chunk_budget_bytes(bool gpu);
// Rows of logits per chunk so that one chunk of logits (fp32 by default) takes about `budget_bytes`.
int64_t chunk_rows(int64_t vocab, int64_t budget_bytes = chunk_budget_bytes(false), int64_t bytes_per_logit = 4);
// The chunk that splits `rows` evenly into as few chunks of at most `max_rows` as possible.
int64_t balanced_chunk_rows(int64_t rows, int64_t max_rows);

// The fused pass over rows of logits under the loss (tests call it directly).

// Whether z [n, V] can go through the fused rows: fp32, fp64 or bf16 with unit stride along V, on
// a CPU, or on a CUDA device the kernel runs on (checked once per device, with a warning if not).
bool fused_supported(const at::Tensor& z);

// Returns the loss of every row [n] (fp64 for fp64 z, fp32 otherwise): CE_r = lse(s z_r) - s z_{r,y_r},
// NaN on every device for a row holding a non-finite logit (+inf, -inf or NaN). With grad, z is
// overwritten by (softmax(s z) - onehot(y)) s g', in z's dtype, where g' = g / max(counted, 1) when
// `counted` (one int64 on z's device, e.g. the rows a mean is over; read by the kernel there, so no
// host sync on a GPU) is given, else g. y [n] int64 on z's device; a row whose target is
// ignore_index counts for nothing: loss 0 and, with grad, a zero row, its logits unread. On a CPU
// any other target outside [0, V) is an error naming it and its row (checked in the loop, no pass
// of its own), on a GPU it gives its row a NaN loss.
at::Tensor softmax_xent_rows_(at::Tensor& z, const at::Tensor& y, double s, double g, bool grad,
                              int64_t ignore_index = -100, const at::Tensor& counted = {});

// x *= g in place (g a scalar tensor on x's device), unless g is exactly 1: a CPU g is read on the
// host, a CUDA one by a kernel on the device (no host sync, and no pass over x when it is 1).
void scale_unless_one_(at::Tensor& x, const at::Tensor& g);

}  // namespace ember::xent
