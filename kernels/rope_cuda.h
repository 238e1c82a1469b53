// ATen glue of the CUDA RoPE kernel (rope_cuda_glue.cpp). Without CUDA in the build
// cuda_kernel_compiled() is false and rotate_cuda throws a clear error.
#pragma once
#include <ATen/ATen.h>

namespace ember::rope {

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
