#include "ember/model/linear_cross_entropy.h"

#include "ember/model/autocast.h"
#include "kernels/xent.h"

namespace ember {
namespace {

// The head's matmuls run in the autocast dtype under autocast, else in the promoted dtype of h and W.
xent::Head head_of(const at::Tensor& h, const at::Tensor& w, double scale, int64_t chunk_rows, int64_t ignore_index) {
  const auto mm = autocast_enabled(h.device()) ? autocast_dtype(h.device())
                                                : at::promote_types(h.scalar_type(), w.scalar_type());
  return {mm, scale, chunk_rows, ignore_index};
}

}  // namespace

at::Tensor linear_cross_entropy_per_row(const at::Tensor& hidden, const at::Tensor& weight, const at::Tensor& targets,
                                        double scale, int64_t chunk_rows, int64_t ignore_index) {
  return xent::loss_per_row(hidden, weight, targets, head_of(hidden, weight, scale, chunk_rows, ignore_index));
}

LinearCrossEntropyParts linear_cross_entropy_parts(const at::Tensor& hidden, const at::Tensor& weight,
                                                   const at::Tensor& targets, double scale, int64_t chunk_rows,
                                                   int64_t ignore_index) {
  auto p = xent::loss_parts(hidden, weight, targets, head_of(hidden, weight, scale, chunk_rows, ignore_index));
  return {p.loss, p.grad_hidden, p.grad_weight};
}

at::Tensor linear_cross_entropy(const at::Tensor& hidden, const at::Tensor& weight, const at::Tensor& targets,
                                double scale, int64_t chunk_rows, const LossGradient& gradient, int64_t ignore_index) {
  xent::Gradient g{gradient.factor, gradient.root, {}};
  // A tied table whose lookup recorded its forward takes the weight's gradient in backward, adds its
  // rows into it in place and hands on the sum (model/tied_gradient.h).
  if (const auto& table = gradient.table; table && table->lookup)
    g.take_weight_gradient = [table](at::Tensor head) { table->head = std::move(head); };
  return xent::loss(hidden, weight, targets, head_of(hidden, weight, scale, chunk_rows, ignore_index), g);
}

}  // namespace ember
