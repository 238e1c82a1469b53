// RoPE's rotation as the model calls it (rotate-half convention, docs/mixers.md): x [B, H, T, d_h]
// rotated at positions offset.. by tables cos, sin [positions, d_h/2], with its autograd (the
// rotation is orthogonal: the gradient is the inverse rotation of the incoming one, and backward
// saves only the tables). CPU: one fused pass over rows (kernels/rope_cpu_loops.h); CUDA:
// kernels/rope_cuda.cu; with kernels.rope = aten, or elsewhere (meta), ATen ops. The result, and
// x's gradient, keep x's memory layout where it is dense, else are contiguous.
#pragma once
#include <ATen/ATen.h>

namespace ember::rope {

// Whether x is rotated in its own dtype (ember's CUDA kernel, in the tables' precision, rounded
// once); otherwise the caller casts x to the tables' dtype first.
bool rotates_in_input_dtype(const at::Tensor& x);

// x's dtype must be the tables' unless rotates_in_input_dtype(x).
at::Tensor rotate(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin, int64_t offset);

// Bytes per row that rotate keeps for backward: none, it saves only the tables (either path). The
// memory estimate sums this; tests/unit/test_saved_bytes.cpp measures it.
int64_t saved_bytes_per_row();

// The CUDA pass under the autograd function (tests call it directly). Without CUDA in the build
// cuda_kernel_compiled() is false and rotate_cuda throws a clear error.
bool cuda_kernel_compiled();
// Whether the kernel runs on this CUDA device (its image or PTX is in the build; checked once per
// device, with a warning when not, so that callers fall back to ATen ops).
bool cuda_kernel_runs_on(const at::Device& device);

// x [B, H, T, 2h] on a CUDA device (fp32, fp64, bf16 or fp16); cos, sin [positions, h] on x's
// device, fp64 for fp64 x and fp32 otherwise. Writes y (x's shape, dtype and device, unit stride
// over the last dimension, any other strides), rotated at positions offset.. in the tables'
// precision (inverse: by the negative angles).
void rotate_cuda(const at::Tensor& x, at::Tensor& y, const at::Tensor& cos, const at::Tensor& sin, int64_t offset,
                 bool inverse);

}  // namespace ember::rope
