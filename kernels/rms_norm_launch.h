// Raw-pointer launch API of the CUDA RMSNorm with its residual add (no LibTorch headers: nvcc
// compiles rms_norm_cuda.cu against this alone). stream is a cudaStream_t; a launch returns its
// cudaError_t as an int. Element types as in kernels/rms_norm_cpu_loops.h.
#pragma once
#include "kernels/element.h"
#include "kernels/rms_norm_math.h"

namespace ember::rms_norm {

struct Types {
  Element stream;  // x, h, g, r, dh, dx: f32 or f64
  Element m;       // m and dm: the stream's or bf16
  Element y;       // y and dy: the stream's or bf16
};

// Backward sums a row of dg per block, in the stream's type: in shared memory where it fits beside 32
// values of scratch in the 48 KB a block has without opting in (D <= 12256 in fp32, <= 6112 in
// fp64), else in place in the block's row of partial_dg, so rows of any width run. The widest row
// summed in shared memory for elements of `element_size` bytes:
constexpr int64_t kBlockSharedBytes = 48 * 1024;
constexpr int64_t max_shared_width(int64_t element_size) { return kBlockSharedBytes / element_size - 32; }

// Backward's blocks for `rows` rows; each writes one row of partial dg (the caller sums the rows).
int64_t backward_blocks(int64_t rows);

// h (when m is given) = x + m, y and r (kernels/rms_norm_math.h), one block per row.
int launch_forward(const void* x, const void* m, const void* g, void* h, void* y, void* r, Types types,
                   const Shape& shape, void* stream);
// dx (and dm when given) and partial_dg [backward_blocks(rows), D] in the stream's type; dh may be null.
int launch_backward(const void* dh, const void* dy, const void* h, const void* g, const void* r, void* dx, void* dm,
                    void* partial_dg, Types types, const Shape& shape, void* stream);
// 0 (cudaSuccess) when the kernels can run on the current device, else the cudaError_t.
int probe_kernel();

}  // namespace ember::rms_norm
