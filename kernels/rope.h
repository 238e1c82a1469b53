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

}  // namespace ember::rope
