// ember::linear_cross_entropy: the language-model loss without the [N, V] logits
// (model/linear_cross_entropy.h). The operator returns the mean loss with both gradients, formed in
// the same chunked pass; python/ember/_ops.py registers the autograd formula (the chain rule only
// scales them) and the fake implementation.
#include <torch/library.h>

#include "ember/model/linear_cross_entropy.h"

namespace ember::ops {
namespace {

std::tuple<at::Tensor, at::Tensor, at::Tensor> loss_parts(const at::Tensor& hidden, const at::Tensor& weight,
                                                          const at::Tensor& targets, double scale, int64_t chunk_rows) {
  TORCH_CHECK(hidden.dim() == 2 && weight.dim() == 2 && hidden.size(1) == weight.size(1),
              "ember.linear_cross_entropy: hidden [N, D] and weight [V, D] expected, got ", hidden.sizes(), " and ",
              weight.sizes());
  TORCH_CHECK(targets.dim() == 1 && targets.size(0) == hidden.size(0) && targets.scalar_type() == at::kLong,
              "ember.linear_cross_entropy: targets must be int64 [N] for N = ", hidden.size(0), ", got ",
              targets.sizes(), " ", targets.scalar_type());
  auto p = linear_cross_entropy_parts(hidden, weight, targets, scale, chunk_rows);
  return {p.loss, p.grad_hidden, p.grad_weight};
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(ember, m) {
  m.def("linear_cross_entropy(Tensor hidden, Tensor weight, Tensor targets, float scale=1., int chunk_rows=0)"
        " -> (Tensor, Tensor, Tensor)");
  m.impl("linear_cross_entropy", c10::DispatchKey::CompositeExplicitAutograd, TORCH_FN(loss_parts));
}

}  // namespace ember::ops
