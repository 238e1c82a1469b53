#include "ember/model/activation_checkpoint.h"

#include <torch/autograd.h>

#include <ATen/core/ivalue.h>
#include <optional>

#include "ember/model/autocast.h"

namespace ember {
namespace {

// Several tensors in and out, every input defined; gradients reach each input from the outputs a
// gradient reached.
using StreamFn = std::function<std::vector<at::Tensor>(const std::vector<at::Tensor>&)>;

// The block to rerun, kept in the autograd context.
struct Rerun : torch::CustomClassHolder {
  explicit Rerun(StreamFn f) : fn(std::move(f)) {}
  StreamFn fn;
};

struct Checkpoint : torch::autograd::Function<Checkpoint> {
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx, at::TensorList inputs,
                                                const StreamFn& fn) {
    ctx->saved_data["fn"] = c10::IValue::make_capsule(c10::make_intrusive<Rerun>(fn));
    ctx->saved_data["autocast"] = autocast_enabled(inputs[0].device());
    ctx->save_for_backward(inputs.vec());
    return fn(inputs.vec());  // no graph: Function::apply runs forward with gradients off
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_out) {
    const auto saved = ctx->get_saved_variables();
    const auto rerun = c10::static_intrusive_pointer_cast<Rerun>(ctx->saved_data["fn"].toCapsule());
    std::vector<at::Tensor> inputs;
    for (const auto& x : saved) inputs.push_back(x.detach().requires_grad_(x.requires_grad()));
    torch::AutoGradMode grad_on(true);
    std::vector<at::Tensor> outputs;
    {  // the recompute under the forward's autocast state, on this (autograd) thread; its backward
       // under the caller's, as every other block's (PyTorch's checkpoint does the same)
      std::optional<AutocastScope> amp;
      std::optional<NoAutocastScope> no_amp;
      if (ctx->saved_data["autocast"].toBool())
        amp.emplace(saved[0].device(), true);
      else
        no_amp.emplace(saved[0].device());
      outputs = rerun->fn(inputs);
    }
    std::vector<at::Tensor> roots, grads;  // the outputs a gradient reached
    for (size_t i = 0; i < outputs.size(); ++i)
      if (grad_out[i].defined() && outputs[i].requires_grad()) roots.push_back(outputs[i]), grads.push_back(grad_out[i]);
    if (!roots.empty()) torch::autograd::backward(roots, grads);  // parameters' gradients accumulate here
    torch::autograd::variable_list result;
    for (const auto& in : inputs) result.push_back(in.requires_grad() ? in.grad() : at::Tensor());
    result.emplace_back();  // fn
    return result;
  }
};

std::vector<at::Tensor> checkpointed_tensors(const StreamFn& fn, std::vector<at::Tensor> inputs) {
  if (!at::GradMode::is_enabled()) return fn(inputs);  // evaluation: nothing to save
  // The graph hangs on the inputs: a first input that needs no gradient (a frozen embedding) gets a
  // leaf that does, so the block's parameters still receive theirs.
  if (!inputs.front().requires_grad()) inputs.front() = inputs.front().detach().requires_grad_();
  return Checkpoint::apply(at::TensorList(inputs), fn);
}

}  // namespace

// fn by value in both: backward reruns it after the call has returned
at::Tensor checkpointed(const BlockFn& fn, const at::Tensor& x) {
  return checkpointed_tensors([fn](const std::vector<at::Tensor>& in) { return std::vector<at::Tensor>{fn(in[0])}; },
                              {x})[0];
}

ResidualStream checkpointed(const StreamBlockFn& fn, const ResidualStream& stream) {
  auto run = [fn](const std::vector<at::Tensor>& in) {
    auto s = ResidualStream::of(in);
    fn(s);
    return s.tensors();
  };
  return ResidualStream::of(checkpointed_tensors(run, stream.tensors()));
}

}  // namespace ember
