// Projections that read the same input, as one GEMM: y_i = x W_i^T for weights W_i [n_i, d] is
// x [W_1; ...; W_k]^T, the stacked layout: one tensor [..., n_1 + ... + n_k], the blocks side by
// side in the order of the weights. Attention's q, k, v (and gate) and SwiGLU's gate and up are such
// sets. Against one linear per weight it casts x to the autocast dtype once instead of k times and
// keeps one matmul-dtype copy of x for backward instead of k; backward takes the stacked output's
// gradient, one tensor of the same layout, and forms dL/dx and the stacked dL/dW with one GEMM
// each, instead of k GEMMs and k - 1 additions for dL/dx. A consumer that takes the stacked layout
// whole (kernels/swiglu.h, swiglu::gate_stacked) writes that gradient as one buffer; projections()
// hands out the blocks, whose gradients autograd gathers into one (a copy the size of y). The
// parameters stay separate (checkpoints, HF export and analyses see the same names); the stacked
// weight is a transient copy in forward and in backward, not kept between them. Below 64 rows of x
// (decoding) it runs one linear per weight.
//
// kernels.projections (ember/kernels/kernel_choice.h) says whether it stacks (an op of ATen's GEMMs:
// no loops or CUDA kernel of its own); its built-in default stacks
// for CUDA inputs only: on the CPU no gain was measured (bench/RESULTS.md, "Fused projections";
// `auto` times both on the device, ember/kernels/kernel_choice.h).
#pragma once
#include <ATen/ATen.h>

#include <vector>

namespace ember::projections {

// Whether projections of x are stacked: kernels.projections says so and x has 64 rows or more (a
// function of the shape, so that a checkpointed block's recompute takes its forward's path).
bool stacks(const at::Tensor& x);

// x [W_1; ...; W_k]^T, [..., n_1 + ... + n_k]: the stacked layout, as one GEMM whatever stacks(x)
// says (callers ask it first), with its autograd.
at::Tensor stacked(const at::Tensor& x, const std::vector<at::Tensor>& weights);

// [x W_1^T, ..., x W_k^T] for x [..., d] and W_i [n_i, d]: the stacked layout's blocks where
// stacks(x), else one linear per weight.
std::vector<at::Tensor> of(const at::Tensor& x, const std::vector<at::Tensor>& weights);

// Bytes per row that `count` projections of x keep of it for backward (x of `width` in `x_elem`-byte
// elements, the matmuls in `matmul_elem`): x itself when it is in the matmul dtype; else one copy in
// it when they are stacked, one per weight when not (each linear casts apart). The weights' casts
// are autocast's copies, not counted per row. One at::linear: count 1.
int64_t saved_bytes_per_row(int64_t width, int64_t x_elem, int64_t matmul_elem, int64_t count,
                            bool stacked);
// Whether the memory estimate counts of() as stacked: kernels.projections = fused (the
// estimate resolves `auto` for the device it is made for).
bool stacked_in_estimate();

}  // namespace ember::projections
