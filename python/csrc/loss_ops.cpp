// ember::linear_cross_entropy: the language-model loss without the [N, V] logits
// (model/linear_cross_entropy.h). The operator returns the mean loss with both gradients, formed in
// the same chunked pass; python/ember/_registrations.py registers the autograd formula (the chain
// rule only scales them) and the fake implementation. ember::linear_cross_entropy_loss is the loss
// alone, for evaluation: no gradient is formed and no [V, D] buffer allocated.
#include <torch/library.h>

#include "ember/model/linear_cross_entropy.h"

namespace ember::ops {
namespace {

void check_operands(const at::Tensor& hidden, const at::Tensor& weight, const at::Tensor& targets) {
  TORCH_CHECK(hidden.dim() == 2 && weight.dim() == 2 && hidden.size(1) == weight.size(1),
              "ember.linear_cross_entropy: hidden [N, D] and weight [V, D] expected, got ", hidden.sizes(), " and ",
              weight.sizes());
  TORCH_CHECK(targets.dim() == 1 && targets.size(0) == hidden.size(0) && targets.scalar_type() == at::kLong,
              "ember.linear_cross_entropy: targets must be int64 [N] for N = ", hidden.size(0), ", got ",
              targets.sizes(), " ", targets.scalar_type());
  if (targets.numel() == 0 || targets.is_meta()) return;
  if (!targets.is_cpu()) {  // no host sync: an asynchronous device assert
    at::_assert_async(at::logical_and(targets.ge(0), targets.lt(weight.size(0))).all(),
                      "ember.linear_cross_entropy: a target is out of range [0, V)");
    return;
  }
  {
    const auto [lo, hi] = at::aminmax(targets);
    const int64_t low = lo.item<int64_t>(), high = hi.item<int64_t>();
    TORCH_CHECK_INDEX(low >= 0 && high < weight.size(0), "ember.linear_cross_entropy: target ",
                      low < 0 ? low : high, " is out of range [0, ", weight.size(0), ")");
  }
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> loss_parts(const at::Tensor& hidden, const at::Tensor& weight,
                                                          const at::Tensor& targets, double scale, int64_t chunk_rows) {
  check_operands(hidden, weight, targets);
  auto p = linear_cross_entropy_parts(hidden, weight, targets, scale, chunk_rows);
  return {p.loss, p.grad_hidden, p.grad_weight};
}

at::Tensor loss_only(const at::Tensor& hidden, const at::Tensor& weight, const at::Tensor& targets, double scale,
                     int64_t chunk_rows) {
  check_operands(hidden, weight, targets);
  at::NoGradGuard no_graph;  // model/linear_cross_entropy.h: without a graph only the loss is formed
  return linear_cross_entropy(hidden, weight, targets, scale, chunk_rows);
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(ember, m) {
  m.def("linear_cross_entropy(Tensor hidden, Tensor weight, Tensor targets, float scale=1., int chunk_rows=0)"
        " -> (Tensor, Tensor, Tensor)");
  m.impl("linear_cross_entropy", c10::DispatchKey::CompositeExplicitAutograd, TORCH_FN(loss_parts));
  m.def("linear_cross_entropy_loss(Tensor hidden, Tensor weight, Tensor targets, float scale=1., int chunk_rows=0)"
        " -> Tensor");
  m.impl("linear_cross_entropy_loss", c10::DispatchKey::CompositeExplicitAutograd, TORCH_FN(loss_only));
}

}  // namespace ember::ops
