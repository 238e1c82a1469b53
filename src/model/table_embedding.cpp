#include "ember/model/table_embedding.h"

#include <torch/autograd.h>

#include <utility>

#include "ember/model/init.h"

namespace ember {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct TiedHandoffHolder : torch::CustomClassHolder {
  explicit TiedHandoffHolder(std::shared_ptr<TiedTableGradient> t) : table(std::move(t)) {}
  std::shared_ptr<TiedTableGradient> table;
};

// The handoff as an autograd context's saved value (saved_data holds IValues), and back.
c10::IValue tied_handoff_value(std::shared_ptr<TiedTableGradient> table) {
  return c10::IValue::make_capsule(c10::make_intrusive<TiedHandoffHolder>(std::move(table)));
}

std::shared_ptr<TiedTableGradient> tied_handoff(const c10::IValue& value) {
  return c10::static_intrusive_pointer_cast<TiedHandoffHolder>(value.toCapsule())->table;
}

// The tied table's lookup (model/tied_gradient.h): its backward adds the rows' gradient, as a
// sparse gradient, into the head's dense gradient left in `table` in place and hands on the sum as
// the table's whole gradient; with none left there (the head's backward did not run), the sparse
// rows alone, which autograd adds to the table's other gradients.
struct TiedLookup : torch::autograd::Function<TiedLookup> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& weight, const at::Tensor& ids,
                            const std::shared_ptr<TiedTableGradient>& table) {
    ctx->save_for_backward({ids});
    ctx->saved_data["vocab"] = weight.size(0);
    if (table) table->lookup = true;  // the head's backward, after this one's forward, leaves its gradient
    ctx->saved_data["table"] = tied_handoff_value(table);
    return at::embedding(weight, ids);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto ids = ctx->get_saved_variables()[0];
    auto rows = at::embedding_sparse_backward(grads[0], ids, ctx->saved_data["vocab"].toInt(), /*padding_idx=*/-1,
                                              /*scale_grad_by_freq=*/false);
    const auto table = tied_handoff(ctx->saved_data["table"]);
    if (!table || !table->head.defined()) return {rows, {}, {}};
    auto whole = std::exchange(table->head, at::Tensor());  // the handoff lets go: autograd's is the last reference
    return {whole.add_(rows), {}, {}};
  }
};

}  // namespace

TableEmbedding::TableEmbedding(int64_t vocab, int64_t dim, double init_std, bool tied) : tied_(tied) {
  weight_ = register_parameter("weight", normal_parameter({vocab, dim}, init_std));
}

std::shared_ptr<TiedTableGradient> TableEmbedding::share_gradient_with_head() {
  if (!tied_ || !(weight_.is_cpu() || weight_.is_cuda())) return nullptr;  // no sparse kernels on meta
  next_ = std::make_shared<TiedTableGradient>();
  return next_;
}

// Tied: the lookup's rows reach the table's gradient sparsely, added into the head's dense gradient
// (in place when the head left it for this lookup, TiedLookup), instead of a zero-filled V x D table
// summed with it (two passes over V x D per step). The parameter's gradient stays dense.
at::Tensor TableEmbedding::embed(const at::Tensor& ids) {
  const bool sparse_grad = tied_ && (weight_.is_cpu() || weight_.is_cuda());
  if (sparse_grad && at::GradMode::is_enabled() && weight_.requires_grad())
    return TiedLookup::apply(weight_, ids, std::exchange(next_, nullptr));
  return at::embedding(weight_, ids, /*padding_idx=*/-1, /*scale_grad_by_freq=*/false, sparse_grad);
}

}  // namespace ember
