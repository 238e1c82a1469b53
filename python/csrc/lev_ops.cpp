// ember::lev_spline: LEV's fused spline tensor product (docs/leviathan.md steps 4-6) as a PyTorch
// operator with CPU and CUDA kernels. Its backward is the operator ember::lev_spline_backward;
// python/ember/_registrations.py registers the autograd formula and the fake (shape) implementations.
// ember::lev_spline_reference is the same product from plain ATen ops (autograd through them),
// with the optional learnable knot scale the fused kernels do not support.
#include <torch/library.h>

#include "kernels/lev_spline.h"

namespace ember::ops {
namespace {

std::tuple<at::Tensor, at::Tensor> backward_cpu(const at::Tensor& grad, const at::Tensor& m, const at::Tensor& u,
                                                const at::Tensor& S, bool normalize) {
  auto [gu, gs] = lev::spline_backward_cpu(grad.contiguous(), m, u, S, normalize);
  return {gu, gs};
}

std::tuple<at::Tensor, at::Tensor> backward_cuda(const at::Tensor& grad, const at::Tensor& m, const at::Tensor& u,
                                                 const at::Tensor& S, bool normalize) {
  auto [gu, gs] = lev::spline_backward_cuda(grad.contiguous(), m, u, S, normalize);
  return {gu, gs};
}

at::Tensor reference(const at::Tensor& u, const at::Tensor& S, bool normalize,
                     const std::optional<at::Tensor>& knot_scale) {
  return lev::spline_product_reference(u, S, normalize, knot_scale.value_or(at::Tensor()));
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(ember, m) {
  m.def("lev_spline(Tensor u, Tensor S, bool normalize=True) -> Tensor");
  m.def("lev_spline_backward(Tensor grad, Tensor m, Tensor u, Tensor S, bool normalize) -> (Tensor, Tensor)");
  m.def("lev_spline_reference(Tensor u, Tensor S, bool normalize=True, Tensor? knot_scale=None) -> Tensor");
  m.impl("lev_spline_reference", c10::DispatchKey::CompositeImplicitAutograd, TORCH_FN(reference));
}

TORCH_LIBRARY_IMPL(ember, CPU, m) {
  m.impl("lev_spline", TORCH_FN(lev::spline_forward_cpu));
  m.impl("lev_spline_backward", TORCH_FN(backward_cpu));
}

TORCH_LIBRARY_IMPL(ember, CUDA, m) {
  m.impl("lev_spline", TORCH_FN(lev::spline_forward_cuda));
  m.impl("lev_spline_backward", TORCH_FN(backward_cuda));
}

}  // namespace ember::ops
