// Raw-pointer launch API of the CUDA SwiGLU gate (no LibTorch headers: nvcc compiles swiglu_cuda.cu
// against this alone). stream is a cudaStream_t; a launch returns its cudaError_t as an int.
#pragma once
#include "kernels/element.h"
#include "kernels/swiglu_math.h"

namespace ember::swiglu {

// z = SiLU(a) b over the rows (kernels/swiglu_math.h), in fp32 for bf16 (rounded once), in
// the element's precision otherwise.
int launch_forward(const void* a, const void* b, void* z, Element element, const Rows& rows, void* stream);
// da, db from dz, a, b.
int launch_backward(const void* a, const void* b, const void* dz, void* da, void* db, Element element,
                    const Rows& rows, void* stream);
// 0 (cudaSuccess) when the kernels can run on the current device, else the cudaError_t.
int probe_kernel();

}  // namespace ember::swiglu
