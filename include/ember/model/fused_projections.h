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
// By default the stacking is on for CUDA inputs and off on the CPU, where it measured 2-6% slower
// in fp32 and even in bf16 (bench/RESULTS.md, "Fused projections"). EMBER_FUSED_PROJECTIONS=1
// turns it on everywhere, =0 off everywhere (A/B runs); set_fused_projections does the same.
#pragma once
#include <ATen/ATen.h>

#include <vector>

namespace ember {

// [x W_1^T, ..., x W_k^T] for x [..., d] and W_i [n_i, d].
std::vector<at::Tensor> projections(const at::Tensor& x, const std::vector<at::Tensor>& weights);

enum class FusedProjections { automatic, on, off };  // automatic: on for CUDA inputs
// Whether projections() stacks the weights for an input on `device`; the setter returns the old mode.
bool fused_projections(const at::Device& device);
FusedProjections set_fused_projections(FusedProjections mode);

}  // namespace ember
