// Projections that read the same input, as one GEMM: y_i = x W_i^T for weights W_i [n_i, d] is
// x [W_1; ...; W_k]^T split back into its k column blocks. Attention's q, k, v (and gate) and
// SwiGLU's gate and up are such sets. Against one linear per weight it casts x to the autocast
// dtype once instead of k times and keeps one matmul-dtype copy of x for backward instead of k;
// backward gathers the blocks' gradients into one tensor (a copy the size of y) and forms dL/dx and
// the stacked dL/dW with one GEMM each, instead of k GEMMs and k - 1 additions for dL/dx. The
// parameters stay separate (checkpoints, HF export and analyses see the same names); the stacked
// weight is formed per call from autocast's cached casts of the weights. EMBER_FUSED_PROJECTIONS=0
// (or set_fused_projections(false)) runs one linear per weight instead, for A/B runs.
#pragma once
#include <ATen/ATen.h>

#include <vector>

namespace ember {

// [x W_1^T, ..., x W_k^T] for x [..., d] and W_i [n_i, d].
std::vector<at::Tensor> projections(const at::Tensor& x, const std::vector<at::Tensor>& weights);

// Whether projections() stacks the weights (EMBER_FUSED_PROJECTIONS, default on); the setter
// returns the old value.
bool fused_projections();
bool set_fused_projections(bool on);

}  // namespace ember
