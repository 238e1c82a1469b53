// ATen glue for the CUDA spline kernels: tensors in, launches on the current CUDA stream.
#include "kernels/lev_spline_cuda.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ember/util/error.h"

#ifdef EMBER_WITH_CUDA
#include <c10/cuda/CUDAGuard.h>

#include "kernels/cuda_glue.h"
#endif

namespace ember::lev {

#ifdef EMBER_WITH_CUDA
namespace {
// The kernels index raw memory: a wrong shape must be an error here, not an out-of-bounds read.
CudaShape cuda_shape(const at::Tensor& u, const at::Tensor& S) {
  if (u.dim() != 3 || S.dim() != 4 || u.size(1) != S.size(0) || u.size(2) != S.size(1))
    throw Error(fmt::format("lev spline (CUDA): expected u [N, h, d_s] and S [h, d_s, kappa, r], got {} and {}",
                            fmt::join(u.sizes(), "x"), fmt::join(S.sizes(), "x")));
  if (S.size(2) < 3) throw Error(fmt::format("lev spline (CUDA): needs at least 3 knots, got {}", S.size(2)));
  return {u.size(0), u.size(1), u.size(2), S.size(2), S.size(3)};
}

void require_m_shape(const at::Tensor& t, const char* name, const CudaShape& s) {
  if (t.sizes() != at::IntArrayRef{s.N, s.H, s.R})
    throw Error(fmt::format("lev spline backward (CUDA): {} has shape {}, expected {}x{}x{}", name,
                            fmt::join(t.sizes(), "x"), s.N, s.H, s.R));
}

// Every tensor on the same CUDA device as u: the kernels run there, on that device's current stream.
void require_same_device(const char* op, const at::Tensor& u, std::initializer_list<const at::Tensor*> others) {
  if (!u.is_cuda()) throw Error(fmt::format("{}: expected CUDA tensors, got u on {}", op, u.device().str()));
  for (const auto* t : others)
    if (t->device() != u.device())
      throw Error(fmt::format("{}: tensors on different devices ({} and {})", op, u.device().str(), t->device().str()));
}

using cuda_glue::check_launch;
using cuda_glue::stream_of;
}  // namespace

bool cuda_kernels_compiled() { return true; }

at::Tensor spline_forward_cuda(const at::Tensor& u_in, const at::Tensor& S_in, bool normalize) {
  require_same_device("LEV spline forward", u_in, {&S_in});
  const c10::cuda::CUDAGuard guard(u_in.device());
  auto u = u_in.contiguous(), S = S_in.contiguous();
  auto M = at::empty({u.size(0), u.size(1), S.size(3)}, u.options());
  AT_DISPATCH_FLOATING_TYPES(u.scalar_type(), "lev_spline_forward_cuda", [&] {
    check_launch("LEV spline forward",
                 launch_spline_forward<scalar_t>(u.data_ptr<scalar_t>(), S.data_ptr<scalar_t>(), M.data_ptr<scalar_t>(),
                                                 cuda_shape(u, S), normalize, stream_of(u)));
  });
  return M;
}

std::pair<at::Tensor, at::Tensor> spline_backward_cuda(const at::Tensor& grad_m, const at::Tensor& m,
                                                       const at::Tensor& u_in, const at::Tensor& S_in, bool normalize) {
  require_same_device("LEV spline backward", u_in, {&S_in, &grad_m, &m});
  const c10::cuda::CUDAGuard guard(u_in.device());
  auto u = u_in.contiguous(), S = S_in.contiguous(), gM = grad_m.contiguous(), M = m.contiguous();
  auto gU = at::empty_like(u), gS = at::empty_like(S);
  const auto shape = cuda_shape(u, S);
  require_m_shape(gM, "grad M", shape);
  require_m_shape(M, "M", shape);
  auto workspace = at::empty({spline_backward_workspace(shape)}, u.options());
  AT_DISPATCH_FLOATING_TYPES(u.scalar_type(), "lev_spline_backward_cuda", [&] {
    check_launch("LEV spline backward",
                 launch_spline_backward<scalar_t>(gM.data_ptr<scalar_t>(), M.data_ptr<scalar_t>(),
                                                  u.data_ptr<scalar_t>(), S.data_ptr<scalar_t>(),
                                                  gU.data_ptr<scalar_t>(), gS.data_ptr<scalar_t>(),
                                                  workspace.data_ptr<scalar_t>(), shape, normalize, stream_of(u)));
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
