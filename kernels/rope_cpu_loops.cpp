#include "kernels/rope_cpu_loops.h"

#include "kernels/simd_clones.h"

namespace ember::rope::cpu {
namespace {

template <class T>
inline __attribute__((always_inline)) void rotate(const T* x, T* y, const T* cos, const T* sin, const Rows& s,
                                                  bool inverse, int64_t r0, int64_t r1) {
  const int64_t half = s.half;
  const T sign = inverse ? T(-1) : T(1);
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t t = r % s.T, h = r / s.T % s.H, b = r / (s.T * s.H);
    const T* xa = x + b * s.stride_b + h * s.stride_h + t * s.stride_t;
    const T* xb = xa + half;
    const T* c = cos + (s.offset + t) * half;
    const T* sn = sin + (s.offset + t) * half;
    T* ya = y + b * s.out_b + h * s.out_h + t * s.out_t;
    T* yb = ya + half;
    EMBER_IVDEP
    for (int64_t i = 0; i < half; ++i) {
      const T si = sign * sn[i];
      ya[i] = xa[i] * c[i] - xb[i] * si;
      yb[i] = xb[i] * c[i] + xa[i] * si;
    }
  }
}

}  // namespace

EMBER_SIMD_CLONES void rotate_rows(const float* x, float* y, const float* cos, const float* sin, const Rows& s,
                                   bool inverse, int64_t r0, int64_t r1) {
  rotate(x, y, cos, sin, s, inverse, r0, r1);
}

EMBER_SIMD_CLONES void rotate_rows(const double* x, double* y, const double* cos, const double* sin, const Rows& s,
                                   bool inverse, int64_t r0, int64_t r1) {
  rotate(x, y, cos, sin, s, inverse, r0, r1);
}

}  // namespace ember::rope::cpu
