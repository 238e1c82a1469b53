// ATen glue for the CUDA spline kernels: tensors in, launches on the current CUDA stream.
#include "kernels/lev_spline_cuda.h"

#include "ember/util/error.h"

#ifdef EMBER_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#endif

namespace ember::lev {

#ifdef EMBER_WITH_CUDA
namespace {
CudaShape cuda_shape(const at::Tensor& u, const at::Tensor& S) {
  return {u.size(0), u.size(1), u.size(2), S.size(2), S.size(3)};
}
void* stream() { return at::cuda::getCurrentCUDAStream().stream(); }
}  // namespace

bool cuda_kernels_compiled() { return true; }

at::Tensor spline_forward_cuda(const at::Tensor& u_in, const at::Tensor& S_in, bool normalize) {
  auto u = u_in.contiguous(), S = S_in.contiguous();
  auto M = at::empty({u.size(0), u.size(1), S.size(3)}, u.options());
  AT_DISPATCH_FLOATING_TYPES(u.scalar_type(), "lev_spline_forward_cuda", [&] {
    launch_spline_forward<scalar_t>(u.data_ptr<scalar_t>(), S.data_ptr<scalar_t>(), M.data_ptr<scalar_t>(),
                                    cuda_shape(u, S), normalize, stream());
  });
  return M;
}

std::pair<at::Tensor, at::Tensor> spline_backward_cuda(const at::Tensor& grad_m, const at::Tensor& m,
                                                       const at::Tensor& u_in, const at::Tensor& S_in, bool normalize) {
  auto u = u_in.contiguous(), S = S_in.contiguous(), gM = grad_m.contiguous(), M = m.contiguous();
  auto gU = at::zeros_like(u), gS = at::zeros_like(S);
  AT_DISPATCH_FLOATING_TYPES(u.scalar_type(), "lev_spline_backward_cuda", [&] {
    launch_spline_backward<scalar_t>(gM.data_ptr<scalar_t>(), M.data_ptr<scalar_t>(), u.data_ptr<scalar_t>(),
                                     S.data_ptr<scalar_t>(), gU.data_ptr<scalar_t>(), gS.data_ptr<scalar_t>(),
                                     cuda_shape(u, S), normalize, stream());
  });
  return {gU, gS};
}
#else
bool cuda_kernels_compiled() { return false; }

at::Tensor spline_forward_cuda(const at::Tensor&, const at::Tensor&, bool) {
  throw Error("LEV spline: this build has no CUDA kernels (configure with a CUDA LibTorch and nvcc)");
}
std::pair<at::Tensor, at::Tensor> spline_backward_cuda(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                                       const at::Tensor&, bool) {
  throw Error("LEV spline: this build has no CUDA kernels (configure with a CUDA LibTorch and nvcc)");
}
#endif

}  // namespace ember::lev
