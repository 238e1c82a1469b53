#include "ember/model/swiglu_gate.h"

#include <torch/autograd.h>

#include "ember/kernels/kernel_choice.h"
#include "kernels/swiglu.h"

namespace ember {
namespace {

// Whether b is the second half of the rows a is the first half of: [..., 2F] split in two.
bool halves_of_one_buffer(const at::Tensor& a, const at::Tensor& b) {
  if (a.dim() < 2 || a.sizes() != b.sizes() || a.strides() != b.strides() || !a.is_alias_of(b)) return false;
  const int64_t width = a.size(-1);
  bool rows = a.stride(-1) == 1 && a.stride(-2) == 2 * width;
  for (int64_t d = 0; rows && d + 2 < a.dim(); ++d) rows = a.stride(d) == a.size(d + 1) * a.stride(d + 1);
  return rows && b.storage_offset() == a.storage_offset() + width;
}

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct SwiGLUGate : torch::autograd::Function<SwiGLUGate> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& a, const at::Tensor& b) {
    ctx->save_for_backward({a, b});
    ctx->saved_data["halves"] = halves_of_one_buffer(a, b);
    auto z = swiglu::gate_forward(a, b);
    kernels::testing::apply_fault(kernels::Op::swiglu, z);
    return z;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto& a = saved[0];
    at::Tensor into;
    if (ctx->saved_data["halves"].toBool()) {
      auto shape = a.sizes().vec();
      shape.back() *= 2;
      into = at::empty(shape, a.options());
    }
    auto [da, db] = swiglu::gate_backward(a, saved[1], grads[0], into);
    return {da, db};
  }
};

}  // namespace

at::Tensor swiglu_gate(const at::Tensor& a, const at::Tensor& b) {
  if (!kernels::use_fused(kernels::Op::swiglu, a.device()) || !swiglu::fused_supported(a, b)) return at::silu(a) * b;
  return SwiGLUGate::apply(a, b);
}

}  // namespace ember
