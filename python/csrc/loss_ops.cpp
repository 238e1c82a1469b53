// ember::linear_cross_entropy: the language-model loss without the [N, V] logits
// (model/linear_cross_entropy.h). The operator returns the mean loss with both gradients, formed in
// the same chunked pass; python/ember/_registrations.py registers the autograd formula (the chain
// rule only scales them) and the fake implementation. ember::linear_cross_entropy_loss is the loss
// alone, for evaluation: no gradient is formed and no [V, D] buffer allocated. Targets equal to
// ignore_index (last in the schema, so that older calls keep their meaning) count for nothing and
// the mean is over the others, as in F.cross_entropy.
#include <torch/library.h>

#include "ember/model/linear_cross_entropy.h"

namespace ember::ops {
namespace {

void check_operands(const at::Tensor& hidden, const at::Tensor& weight, const at::Tensor& targets,
                    int64_t ignore_index) {
  TORCH_CHECK(hidden.dim() == 2 && weight.dim() == 2 && hidden.size(1) == weight.size(1),
              "ember.linear_cross_entropy: hidden [N, D] and weight [V, D] expected, got ", hidden.sizes(), " and ",
              weight.sizes());
  TORCH_CHECK(targets.dim() == 1 && targets.size(0) == hidden.size(0) && targets.scalar_type() == at::kLong,
              "ember.linear_cross_entropy: targets must be int64 [N] for N = ", hidden.size(0), ", got ",
              targets.sizes(), " ", targets.scalar_type());
  if (targets.numel() == 0 || targets.is_meta()) return;
  const auto bad = at::logical_and(at::logical_or(targets.lt(0), targets.ge(weight.size(0))), targets.ne(ignore_index));
  if (!targets.is_cpu()) {  // no host sync: an asynchronous device assert
    at::_assert_async(bad.any().logical_not(), "ember.linear_cross_entropy: a target is out of range [0, V)");
    return;
  }
  const int64_t first = bad.to(at::kByte).argmax().item<int64_t>();  // the first bad one, if any
  TORCH_CHECK_INDEX(!bad[first].item<bool>(), "ember.linear_cross_entropy: target ", targets[first].item<int64_t>(),
                    " is out of range [0, ", weight.size(0), ") and not the ignore index ", ignore_index);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> loss_parts(const at::Tensor& hidden, const at::Tensor& weight,
                                                          const at::Tensor& targets, double scale, int64_t chunk_rows,
                                                          int64_t ignore_index) {
  check_operands(hidden, weight, targets, ignore_index);
  auto p = linear_cross_entropy_parts(hidden, weight, targets, scale, chunk_rows, ignore_index);
  return {p.loss, p.grad_hidden, p.grad_weight};
}

at::Tensor loss_only(const at::Tensor& hidden, const at::Tensor& weight, const at::Tensor& targets, double scale,
                     int64_t chunk_rows, int64_t ignore_index) {
  check_operands(hidden, weight, targets, ignore_index);
  at::NoGradGuard no_graph;  // model/linear_cross_entropy.h: without a graph only the loss is formed
  return linear_cross_entropy(hidden, weight, targets, scale, chunk_rows, {}, ignore_index);
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(ember, m) {
  m.def(
      "linear_cross_entropy(Tensor hidden, Tensor weight, Tensor targets, float scale=1., int chunk_rows=0, "
      "int ignore_index=-100) -> (Tensor, Tensor, Tensor)");
  m.impl("linear_cross_entropy", c10::DispatchKey::CompositeExplicitAutograd, TORCH_FN(loss_parts));
  m.def(
      "linear_cross_entropy_loss(Tensor hidden, Tensor weight, Tensor targets, float scale=1., int chunk_rows=0, "
      "int ignore_index=-100) -> Tensor");
  m.impl("linear_cross_entropy_loss", c10::DispatchKey::CompositeExplicitAutograd, TORCH_FN(loss_only));
}

}  // namespace ember::ops
