// Inner loops of the fused CPU RMSNorm with its residual add (math: kernels/rms_norm_math.h; no
// ATen) over a range of rows [r0, r1) of contiguous [rows, D] arrays. The caller splits rows across
// threads. Built with -O3 and cloned for AVX2+FMA and AVX-512. One overload per storage combination
// of (stream, m and dm, y and dy): (float, float, float), (float, Bf16, float), (float, float, Bf16),
// (float, Bf16, Bf16), (double, double, double).
#pragma once
#include <cstdint>

#include "kernels/rms_norm_math.h"

namespace ember::rms_norm::cpu {

// Forward: h = x + m when m is given (else h is x and is not written), y, and r[row].
// Backward: dx (and dm, when given, in m's type); dg += sum over the rows of dy h r, in fp64. dh may
// be null (no gradient along the stream).
#define EMBER_RMS_NORM_ROWS(S, M, Y)                                                                              \
  void forward_rows(const S* x, const M* m, const S* g, S* h, Y* y, S* r, const Shape& shape, int64_t r0,        \
                    int64_t r1);                                                                                  \
  void backward_rows(const S* dh, const Y* dy, const S* h, const S* g, const S* r, S* dx, M* dm, double* dg,     \
                     const Shape& shape, int64_t r0, int64_t r1);
EMBER_RMS_NORM_ROWS(float, float, float)
EMBER_RMS_NORM_ROWS(float, Bf16, float)
EMBER_RMS_NORM_ROWS(float, float, Bf16)
EMBER_RMS_NORM_ROWS(float, Bf16, Bf16)
EMBER_RMS_NORM_ROWS(double, double, double)
#undef EMBER_RMS_NORM_ROWS

}  // namespace ember::rms_norm::cpu
