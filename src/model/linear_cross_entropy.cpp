#include "ember/model/linear_cross_entropy.h"

#include <torch/autograd.h>

#include <algorithm>

#include "ember/model/autocast.h"

namespace ember {
namespace {

struct Pass {
  at::Tensor loss_sum;        // sum over rows of CE, in the accumulation dtype
  at::Tensor grad_h, grad_w;  // d(mean CE)/dh [N, D] and /dW [V, D]; undefined without gradients
};

at::ScalarType matmul_dtype(const at::Tensor& h, const at::Tensor& w) {
  if (autocast_enabled(h.device())) return autocast_dtype(h.device());
  return at::promote_types(h.scalar_type(), w.scalar_type());
}

// One pass over chunks of rows: z = s h W^T, CE_i = logsumexp(z_i) - z_{i, y_i}; with gradients,
// dCE/dz = softmax(z) - onehot(y), scaled by s / N and folded into h and W at once.
Pass chunked_pass(const at::Tensor& h, const at::Tensor& w, const at::Tensor& y, double scale, int64_t rows, bool grads,
                  at::Tensor* per_row = nullptr, bool grad_weight = true) {
  const auto mm = matmul_dtype(h, w);
  const auto acc = mm == at::kDouble ? at::kDouble : at::kFloat;
  NoAutocastScope explicit_dtypes(h.device());
  const auto wm = w.to(mm);
  const int64_t N = h.size(0);
  Pass p{at::zeros({}, h.options().dtype(acc)), {}, {}};
  if (grads) {
    // Zeros, not empty: its chunks are views handed to copy_, and a view of uninitialised memory
    // can hold NaN bit patterns that the non-finite trace (model/nonfinite_trace.h) would report.
    p.grad_h = at::zeros({N, h.size(1)}, h.options().dtype(mm));
    if (grad_weight) p.grad_w = at::zeros(w.sizes(), w.options().dtype(acc));
  }
  for (int64_t start = 0; start < N; start += rows) {
    const int64_t n = std::min(rows, N - start);
    const auto hc = h.narrow(0, start, n).to(mm);
    const auto yc = y.narrow(0, start, n).unsqueeze(1);
    auto z = at::linear(hc, wm).to(acc);
    if (scale != 1.0) z.mul_(scale);
    auto log_p = at::log_softmax(z, -1);  // z - log sum_v exp z_v, stably, in one fused kernel
    z.reset();
    const auto ce = -log_p.gather(1, yc);  // CE = log sum exp z - z_y
    p.loss_sum += ce.sum();
    if (per_row) per_row->narrow(0, start, n).copy_(ce.squeeze(1));
    if (!grads) continue;
    auto g = log_p.exp_();                                          // softmax(z)
    g.scatter_add_(1, yc, at::full({n, 1}, -1.0, g.options()));     // - onehot(y)
    const auto gm = g.mul_(scale / static_cast<double>(N)).to(mm);  // d(mean CE)/d(h W^T)
    p.grad_h.narrow(0, start, n).copy_(at::matmul(gm, wm));
    if (grad_weight) p.grad_w.add_(at::matmul(gm.t(), hc));
  }
  return p;
}

// The device's budget, split evenly over the rows (no thin last chunk).
int64_t loss_chunk_rows(const at::Tensor& h, const at::Tensor& w) {
  const int64_t most = cross_entropy_chunk_rows(w.size(0), cross_entropy_budget_bytes(h.is_cuda()));
  return balanced_chunk_rows(h.size(0), most);
}

struct LinearCrossEntropy : torch::autograd::Function<LinearCrossEntropy> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& h, const at::Tensor& w,
                            const at::Tensor& y, double scale, int64_t rows) {
    // A frozen head (e.g. the teach signal of model/lm.h, which wants dL/dh only) skips dL/dW.
    Pass p = chunked_pass(h, w, y, scale, rows, true, nullptr, ctx->needs_input_grad(1));
    ctx->save_for_backward({p.grad_h.to(h.scalar_type()), p.grad_w.defined() ? p.grad_w.to(w.scalar_type()) : at::Tensor()});
    return p.loss_sum / static_cast<double>(h.size(0));
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_out) {
    const auto saved = ctx->get_saved_variables();
    const auto& g = grad_out[0];  // a scalar: the chain rule only scales the stored gradients
    return {saved[0] * g.to(saved[0].scalar_type()),
            saved[1].defined() ? saved[1] * g.to(saved[1].scalar_type()) : at::Tensor(), {}, {}, {}};
  }
};

}  // namespace

at::Tensor linear_cross_entropy_per_row(const at::Tensor& hidden, const at::Tensor& weight, const at::Tensor& targets,
                                        double scale, int64_t chunk_rows) {
  at::NoGradGuard no_grad;
  const int64_t rows = chunk_rows > 0 ? chunk_rows : loss_chunk_rows(hidden, weight);
  const auto acc = matmul_dtype(hidden, weight) == at::kDouble ? at::kDouble : at::kFloat;
  auto out = at::zeros({hidden.size(0)}, hidden.options().dtype(acc));  // zeros: see chunked_pass
  chunked_pass(hidden, weight, targets, scale, rows, false, &out);
  return out;
}

int64_t cross_entropy_budget_bytes(bool gpu) { return gpu ? int64_t{4} << 30 : int64_t{256} << 20; }

int64_t cross_entropy_chunk_rows(int64_t vocab, int64_t budget_bytes) {
  return std::max<int64_t>(1, budget_bytes / (4 * std::max<int64_t>(vocab, 1)));
}

int64_t balanced_chunk_rows(int64_t rows, int64_t max_rows) {
  const int64_t chunks = (rows + max_rows - 1) / std::max<int64_t>(max_rows, 1);
  return chunks <= 1 ? std::max<int64_t>(rows, 1) : (rows + chunks - 1) / chunks;
}

LinearCrossEntropyParts linear_cross_entropy_parts(const at::Tensor& hidden, const at::Tensor& weight,
                                                   const at::Tensor& targets, double scale, int64_t chunk_rows) {
  at::NoGradGuard no_graph;
  const int64_t rows = chunk_rows > 0 ? chunk_rows : loss_chunk_rows(hidden, weight);
  Pass p = chunked_pass(hidden, weight, targets, scale, rows, true);
  return {p.loss_sum / static_cast<double>(hidden.size(0)), p.grad_h.to(hidden.scalar_type()),
          p.grad_w.to(weight.scalar_type())};
}

at::Tensor linear_cross_entropy(const at::Tensor& hidden, const at::Tensor& weight, const at::Tensor& targets,
                                double scale, int64_t chunk_rows) {
  const int64_t rows = chunk_rows > 0 ? chunk_rows : loss_chunk_rows(hidden, weight);
  const bool grads = at::GradMode::is_enabled() && (hidden.requires_grad() || weight.requires_grad());
  if (!grads)
    return chunked_pass(hidden, weight, targets, scale, rows, false).loss_sum / static_cast<double>(hidden.size(0));
  return LinearCrossEntropy::apply(hidden, weight, targets, scale, rows);
}

}  // namespace ember
