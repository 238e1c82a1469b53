// LEV's spline product (kernels/lev_spline.h): the autograd function, the fused CPU forward and
// backward, the CUDA passes (tensors in, launches on the current CUDA stream) and the ATen reference.
#include "kernels/lev_spline.h"

#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/autograd.h>

#include <algorithm>
#include <string>

#include "ember/util/error.h"
#include "ember/kernels/kernel_choice.h"
#include "kernels/lev_spline_cpu_loops.h"
#include "kernels/lev_spline_math.h"  // kLogEps for the reference

#ifdef EMBER_WITH_CUDA
#include <c10/cuda/CUDAGuard.h>

#include "kernels/cuda_glue.h"
#include "kernels/lev_spline_launch.h"
#endif

namespace ember::lev {
namespace {

using cpu::Shape;

constexpr int64_t kForwardTokens = 16;  // tokens per forward task (one head)
constexpr int64_t kBackwardDims = 16;   // seed dimensions per backward task (one head)

Shape shape_of(const at::Tensor& u, const at::Tensor& S) {
  if (u.dim() != 3 || S.dim() != 4 || u.size(1) != S.size(0) || u.size(2) != S.size(1))
    throw Error("lev spline: expected u [N, h, d_s] and S [h, d_s, kappa, r]");
  if (S.size(2) < 3) throw Error("lev spline: needs at least 3 knots, got " + std::to_string(S.size(2)));
  return {u.size(0), u.size(1), u.size(2), S.size(2), S.size(3)};
}

int64_t blocks(int64_t n, int64_t per_block) { return (n + per_block - 1) / per_block; }

// Tasks are (head, token block), head-major, so that each thread keeps one head's S in cache.
template <class T>
void forward_kernel(const T* u, const T* S, T* M, Shape s, bool normalize) {
  const int64_t per_head = blocks(s.N, kForwardTokens);
  at::parallel_for(0, s.H * per_head, 1, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t l = task / per_head, n0 = task % per_head * kForwardTokens;
      cpu::forward_tokens(u, S, M, s, normalize, l, n0, std::min(s.N, n0 + kForwardTokens));
    }
  });
}

// Tasks are (head, run of seed dimensions): the gradient of S[l, d] has a single writer.
template <class T>
void backward_kernel(const T* gMM, const T* u, const T* S, T* gU, T* gS, Shape s, bool normalize) {
  const int64_t per_head = blocks(s.DS, kBackwardDims);
  at::parallel_for(0, s.H * per_head, 1, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t l = task / per_head, d0 = task % per_head * kBackwardDims;
      cpu::backward_dims(gMM, u, S, gU, gS, s, normalize, l, d0, std::min(s.DS, d0 + kBackwardDims));
    }
  });
}

class SplineProduct : public torch::autograd::Function<SplineProduct> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& u, const at::Tensor& S,
                            bool normalize) {
    at::Tensor m = u.is_meta()   ? at::empty({u.size(0), u.size(1), S.size(3)}, u.options())  // shapes only
                   : u.is_cuda() ? spline_forward_cuda(u, S, normalize)
                                 : spline_forward_cpu(u, S, normalize);
    kernels::testing::apply_fault(kernels::Op::lev, m);
    ctx->save_for_backward({u, S, m});
    ctx->saved_data["normalize"] = normalize;
    return m;
  }
  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    auto saved = ctx->get_saved_variables();
    const bool normalize = ctx->saved_data["normalize"].toBool();
    auto g = grads[0].contiguous();
    if (saved[0].is_meta()) return {at::empty_like(saved[0]), at::empty_like(saved[1]), at::Tensor()};
    auto [gu, gs] = saved[0].is_cuda() ? spline_backward_cuda(g, saved[2], saved[0], saved[1], normalize)
                                       : spline_backward_cpu(g, saved[2], saved[0], saved[1], normalize);
    return {gu, gs, at::Tensor()};
  }
};

}  // namespace

at::Tensor spline_forward_cpu(const at::Tensor& u_in, const at::Tensor& S_in, bool normalize) {
  auto u = u_in.contiguous(), S = S_in.contiguous();
  const Shape s = shape_of(u, S);
  auto M = at::empty({s.N, s.H, s.R}, u.options());
  AT_DISPATCH_FLOATING_TYPES(u.scalar_type(), "lev_spline_forward", [&] {
    forward_kernel<scalar_t>(u.data_ptr<scalar_t>(), S.data_ptr<scalar_t>(), M.data_ptr<scalar_t>(), s, normalize);
  });
  return M;
}

std::pair<at::Tensor, at::Tensor> spline_backward_cpu(const at::Tensor& grad_m, const at::Tensor& m,
                                                      const at::Tensor& u_in, const at::Tensor& S_in, bool normalize) {
  auto u = u_in.contiguous(), S = S_in.contiguous(), gMM = (grad_m * m).contiguous();  // dL/dM * M
  const Shape s = shape_of(u, S);
  auto gU = at::empty_like(u), gS = at::zeros_like(S);
  AT_DISPATCH_FLOATING_TYPES(u.scalar_type(), "lev_spline_backward", [&] {
    backward_kernel<scalar_t>(gMM.data_ptr<scalar_t>(), u.data_ptr<scalar_t>(), S.data_ptr<scalar_t>(),
                              gU.data_ptr<scalar_t>(), gS.data_ptr<scalar_t>(), s, normalize);
  });
  return {gU, gS};
}

at::Tensor spline_product(const at::Tensor& u, const at::Tensor& S, bool normalize) {
  if (u.scalar_type() != S.scalar_type()) throw Error("lev spline: u and S must share a dtype (fp32 or fp64)");
  return SplineProduct::apply(u, S, normalize);
}

at::Tensor spline_product_reference(const at::Tensor& u, const at::Tensor& S, bool normalize,
                                    const at::Tensor& knot_scale) {
  const int64_t K = S.size(2);
  auto grid = at::arange(K, u.options()) / static_cast<double>(K - 1);  // g_m = m / (kappa - 1)
  auto dist = (u.unsqueeze(-1) - grid).abs();                           // [N, h, d_s, kappa]
  auto t = knot_scale.defined() ? dist * knot_scale.unsqueeze(-1) : dist * static_cast<double>(K - 1);
  auto B = at::where(t < 0.5, 0.75 - t * t, at::where(t < 1.5, 0.5 * (1.5 - t) * (1.5 - t), at::zeros_like(t)));
  if (normalize) B = B / B.sum(-1, true);             // partition of unity
  auto phi = at::einsum("nhdk,hdkr->nhdr", {B, S});   // step 5
  auto log_abs = (phi.abs() + kLogEps).log().sum(2);  // step 6, in log space
  auto negatives = (phi < 0).sum(2).remainder(2);
  return (1 - 2 * negatives).to(u.scalar_type()) * log_abs.exp();
}


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
