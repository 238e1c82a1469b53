#include "ember/model/activation_checkpoint.h"

#include <torch/autograd.h>

#include <ATen/core/ivalue.h>
#include <optional>

#include "ember/model/autocast.h"

namespace ember {
namespace {

// The block to rerun, kept in the autograd context.
struct Rerun : torch::CustomClassHolder {
  explicit Rerun(BlockFn f) : fn(std::move(f)) {}
  BlockFn fn;
};

struct Checkpoint : torch::autograd::Function<Checkpoint> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, const BlockFn& fn) {
    ctx->saved_data["fn"] = c10::IValue::make_capsule(c10::make_intrusive<Rerun>(fn));
    ctx->saved_data["autocast"] = autocast_enabled(x.device());
    ctx->save_for_backward({x});
    return fn(x);  // no graph: Function::apply runs forward with gradients off
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_out) {
    const auto x = ctx->get_saved_variables()[0];
    const auto rerun = c10::static_intrusive_pointer_cast<Rerun>(ctx->saved_data["fn"].toCapsule());
    at::Tensor input = x.detach().requires_grad_(x.requires_grad());
    torch::AutoGradMode grad_on(true);
    at::Tensor y;
    {  // the recompute under the forward's autocast state, on this (autograd) thread; its backward
       // under the caller's, as every other block's (PyTorch's checkpoint does the same)
      std::optional<AutocastScope> amp;
      std::optional<NoAutocastScope> no_amp;
      if (ctx->saved_data["autocast"].toBool())
        amp.emplace(x.device(), true);
      else
        no_amp.emplace(x.device());
      y = rerun->fn(input);
    }
    torch::autograd::backward({y}, {grad_out[0]});  // parameters' gradients accumulate here
    return {input.requires_grad() ? input.grad() : at::Tensor(), at::Tensor()};
  }
};

}  // namespace

at::Tensor checkpointed(const BlockFn& fn, const at::Tensor& x) {
  if (!at::GradMode::is_enabled()) return fn(x);  // evaluation: nothing to save
  // The graph hangs on x: an input that needs no gradient (a frozen embedding) gets a leaf that
  // does, so the block's parameters still receive theirs.
  return Checkpoint::apply(x.requires_grad() ? x : x.detach().requires_grad_(), fn);
}

}  // namespace ember
