// Raw-pointer launch API of the CUDA softmax cross-entropy kernel (no LibTorch headers: nvcc
// compiles xent_cuda.cu against this alone). stream is a cudaStream_t; the launch returns its
// cudaError_t as an int.
#pragma once
#include <cstdint>

#include "kernels/element.h"

namespace ember::xent {

// One block per row of z [rows, V] (row stride ld): loss[r] = CE at scale s (fp64 for f64 z, fp32
// otherwise; NaN for a row holding a non-finite logit); with grad, z becomes
// (softmax(s z) - onehot(y)) s g' in place, g' = g / max(*counted, 1) when counted (a device int64)
// is given, else g. A row whose target is `ignore` gets loss 0 and, with grad, zeros. Any other
// target outside [0, V) gives a NaN loss and leaves its row alone (the step is then non-finite,
// not a device trap).
int launch_xent(void* z, Element element, int64_t rows, int64_t V, int64_t ld, const int64_t* y, int64_t ignore,
                double s, double g, const int64_t* counted, bool grad, void* loss, void* stream);
int probe_xent_kernel();
// x [n] (contiguous) *= *g, a device scalar of x's element type, unless *g is exactly 1.
int launch_scale_unless_one(void* x, Element element, int64_t n, const void* g, void* stream);

}  // namespace ember::xent
