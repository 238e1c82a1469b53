// Raw-pointer launch API of the CUDA RoPE kernel (no LibTorch headers: nvcc compiles rope_cuda.cu
// against this alone). stream is a cudaStream_t; the launch returns its cudaError_t as an int.
#pragma once
#include "kernels/element.h"
#include "kernels/rope_rows.h"

namespace ember::rope {

// y (rows at its strides in `rows`, x's element type) = x rotated at positions offset.. (inverse: by the negative
// angles). cos and sin are [positions, half] contiguous: double for f64, float otherwise, and the
// rotation runs in their precision, so a bf16 or f16 x is rounded once, after an fp32 rotation.
int launch_rope(const void* x, void* y, const void* cos, const void* sin, Element element, const Rows& rows,
                bool inverse, void* stream);
// 0 (cudaSuccess) when the kernel can run on the current device: the build holds its machine code
// or PTX the driver can compile for it; else the cudaError_t (no kernel image).
int probe_rope_kernel();

}  // namespace ember::rope
