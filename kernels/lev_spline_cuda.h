// ATen glue of the LEV spline CUDA kernels (lev_spline_cuda_glue.cpp): tensors in, launches of
// lev_spline_launch.h on the current stream. Without CUDA in the build it throws a clear error.
#pragma once
#include <ATen/ATen.h>

#include <utility>

#include "kernels/lev_spline_launch.h"

namespace ember::lev {

at::Tensor spline_forward_cuda(const at::Tensor& u, const at::Tensor& S, bool normalize);
std::pair<at::Tensor, at::Tensor> spline_backward_cuda(const at::Tensor& grad_m, const at::Tensor& m,
                                                       const at::Tensor& u, const at::Tensor& S, bool normalize);
bool cuda_kernels_compiled();

}  // namespace ember::lev
