// Projections that read the same input, as one GEMM: y_i = x W_i^T for weights W_i [n_i, d] is
// x [W_1; ...; W_k]^T split back into its k column blocks. Attention's q, k, v (and gate) and
// SwiGLU's gate and up are such sets. Against one linear per weight it casts x to the autocast
// dtype once instead of k times and keeps one matmul-dtype copy of x for backward instead of k;
// backward gathers the blocks' gradients into one tensor (a copy the size of y, unless their
// consumer wrote them as one buffer, as the fused SwiGLU gate does) and forms dL/dx and
// the stacked dL/dW with one GEMM each, instead of k GEMMs and k - 1 additions for dL/dx. The
// parameters stay separate (checkpoints, HF export and analyses see the same names); the stacked
// weight is a transient copy in forward and in backward, not kept between them. Below 64 rows of x
// (decoding) it runs one linear per weight.
//
// kernels.projections (ember/kernels/kernel_choice.h) says whether it stacks; its built-in default stacks
// for CUDA inputs only: on the CPU no gain was measured (bench/RESULTS.md, "Fused projections";
// `auto` times both on the device, ember/kernels/kernel_choice.h).
#pragma once
#include <ATen/ATen.h>

#include <vector>

namespace ember {

// [x W_1^T, ..., x W_k^T] for x [..., d] and W_i [n_i, d].
std::vector<at::Tensor> projections(const at::Tensor& x, const std::vector<at::Tensor>& weights);

}  // namespace ember
