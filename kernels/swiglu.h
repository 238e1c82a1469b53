// SwiGLU's gate z = SiLU(a) * b as the model calls it (docs/mixers.md, the chassis; math:
// kernels/swiglu_math.h), with its autograd: one fused pass forward and one backward, the CPU
// loops (kernels/swiglu_cpu_loops.h) for CPU tensors and the CUDA kernel (kernels/swiglu_cuda.cu)
// for CUDA ones, in place of ATen's silu, mul and their backward. Backward keeps a and b (kept
// anyway as the projections' outputs), not SiLU(a): d_ff fewer values per token and layer.
//
// Used wherever the kernels apply (fp32, fp64 and bf16 on a CPU or on a GPU the kernel runs on;
// ATen's ops elsewhere) unless kernels.swiglu says aten (ember/kernels/kernel_choice.h).
#pragma once
#include <ATen/ATen.h>

#include <utility>

namespace ember::swiglu {

// z = SiLU(a) * b for operands of their own; their gradients are two tensors.
at::Tensor gate(const at::Tensor& a, const at::Tensor& b);

// The same for a and b stacked, gate_up = [a | b] [..., 2F] (kernels/projections.h: the stacked
// layout of {W_gate, W_up}, gate first); its gradient is one tensor of that layout, [da | db], written
// by one pass, which the stacked projection's backward reads as it is.
at::Tensor gate_stacked(const at::Tensor& gate_up);

// Bytes per row of width F that gate and gate_stacked keep for backward, in `elem`-byte elements:
// a and b ([a | b]); `fused`: false for ATen's ops (kernels.swiglu = aten), which keep SiLU(a) too.
// The memory estimate sums this; tests/unit/test_saved_bytes.cpp measures it.
int64_t saved_bytes_per_row(int64_t width, int64_t elem, bool fused);

// The passes under the autograd function (tests call them directly).

// Whether a and b [..., F] go through the fused kernels: the same shape and dtype (fp32, fp64 or
// bf16), on a CPU or on a CUDA device the kernel runs on (checked once per device, with a warning
// if not). Any strides: rows that are not evenly strided are copied first.
bool fused_supported(const at::Tensor& a, const at::Tensor& b);

// z = SiLU(a) b, contiguous, in a's dtype.
at::Tensor gate_forward(const at::Tensor& a, const at::Tensor& b);

// (dL/da, dL/db) for dz = dL/dz. `into`: a [..., 2F] buffer the two are written into as its halves
// (gate_stacked's gradient); undefined: two tensors of their own.
std::pair<at::Tensor, at::Tensor> gate_backward(const at::Tensor& a, const at::Tensor& b, const at::Tensor& dz,
                                                const at::Tensor& into = {});

}  // namespace ember::swiglu
