// LEV's spline tensor product (docs/leviathan.md steps 4-6) as one autograd-aware op:
//   M[n, l, rho] = prod_d phi[n, l, d, rho],  phi = sum_m B~_m(u[n, l, d]) S[l, d, m, rho]
// u [N, h, d_s] in [0, 1], S [h, d_s, kappa, r] -> M [N, h, r], computed in fp32 or fp64.
// The fused kernels (CPU here, CUDA in lev_spline_cuda.cu) never materialise the basis or phi:
// per (token, head) they keep the running product of |phi| + 1e-9 with its sign, and backward
// recomputes the 3 non-zero basis values per element.
#pragma once
#include <ATen/ATen.h>

#include <utility>

namespace ember::lev {

at::Tensor spline_product(const at::Tensor& u, const at::Tensor& S, bool normalize);

// Plain ATen ops, for tests and benchmarks (and for a learnable knot scale [h, d_s], which the
// fused kernel does not support): materialises the basis [N, h, d_s, kappa] and phi.
at::Tensor spline_product_reference(const at::Tensor& u, const at::Tensor& S, bool normalize,
                                    const at::Tensor& knot_scale = {});

// Raw kernels (CPU), exposed for benchmarks and the CUDA comparison.
at::Tensor spline_forward_cpu(const at::Tensor& u, const at::Tensor& S, bool normalize);
std::pair<at::Tensor, at::Tensor> spline_backward_cpu(const at::Tensor& grad_m, const at::Tensor& m,
                                                      const at::Tensor& u, const at::Tensor& S, bool normalize);

// Raw kernels (CUDA): tensors in, launches on the current stream. Without CUDA in the build
// cuda_kernels_compiled() is false and they throw a clear error.
at::Tensor spline_forward_cuda(const at::Tensor& u, const at::Tensor& S, bool normalize);
std::pair<at::Tensor, at::Tensor> spline_backward_cuda(const at::Tensor& grad_m, const at::Tensor& m,
                                                       const at::Tensor& u, const at::Tensor& S, bool normalize);
bool cuda_kernels_compiled();

}  // namespace ember::lev
