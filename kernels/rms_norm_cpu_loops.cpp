#include "kernels/rms_norm_cpu_loops.h"

#include <cmath>

#include "kernels/simd_clones.h"

namespace ember::rms_norm::cpu {
namespace {

constexpr int64_t kLanes = 16;  // independent partial sums, so that the reduction vectorises

// sum_i a_i b_i, accumulated in kLanes lanes (a fixed order: the same result on every CPU path).
template <class T>
inline __attribute__((always_inline)) T dot(const T* a, const T* b, int64_t n) {
  T lane[kLanes] = {};
  const int64_t whole = n / kLanes * kLanes;
  for (int64_t i = 0; i < whole; i += kLanes)
    for (int64_t l = 0; l < kLanes; ++l) lane[l] += a[i + l] * b[i + l];
  T sum = 0;
  for (int64_t l = 0; l < kLanes; ++l) sum += lane[l];
  for (int64_t i = whole; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

template <class T>
inline __attribute__((always_inline)) void forward(const T* x, const T* g, T* y, T* r, int64_t D, double eps,
                                                   int64_t r0, int64_t r1) {
  for (int64_t row = r0; row < r1; ++row) {
    const T* xr = x + row * D;
    T* yr = y + row * D;
    const T rr = T(1) / std::sqrt(dot(xr, xr, D) / T(D) + T(eps));
    r[row] = rr;
    EMBER_IVDEP
    for (int64_t i = 0; i < D; ++i) yr[i] = xr[i] * rr * g[i];
  }
}

template <class T>
inline __attribute__((always_inline)) void backward(const T* dy, const T* x, const T* g, const T* r, T* dx, double* dg,
                                                    int64_t D, int64_t r0, int64_t r1) {
  for (int64_t row = r0; row < r1; ++row) {
    const T *dyr = dy + row * D, *xr = x + row * D;
    T* dxr = dx + row * D;
    const T rr = r[row];
    T lane[kLanes] = {};  // sum_j x_j g_j dy_j
    const int64_t whole = D / kLanes * kLanes;
    for (int64_t i = 0; i < whole; i += kLanes)
      for (int64_t l = 0; l < kLanes; ++l) lane[l] += xr[i + l] * g[i + l] * dyr[i + l];
    T s = 0;
    for (int64_t l = 0; l < kLanes; ++l) s += lane[l];
    for (int64_t i = whole; i < D; ++i) s += xr[i] * g[i] * dyr[i];
    const T k = rr * rr * rr * s / T(D);
    EMBER_IVDEP
    for (int64_t i = 0; i < D; ++i) {
      dxr[i] = rr * g[i] * dyr[i] - k * xr[i];
      dg[i] += static_cast<double>(dyr[i] * xr[i] * rr);
    }
  }
}

}  // namespace

EMBER_SIMD_CLONES void forward_rows(const float* x, const float* g, float* y, float* r, int64_t D, double eps,
                                    int64_t r0, int64_t r1) {
  forward(x, g, y, r, D, eps, r0, r1);
}
EMBER_SIMD_CLONES void forward_rows(const double* x, const double* g, double* y, double* r, int64_t D, double eps,
                                    int64_t r0, int64_t r1) {
  forward(x, g, y, r, D, eps, r0, r1);
}
EMBER_SIMD_CLONES void backward_rows(const float* dy, const float* x, const float* g, const float* r, float* dx,
                                     double* dg, int64_t D, int64_t r0, int64_t r1) {
  backward(dy, x, g, r, dx, dg, D, r0, r1);
}
EMBER_SIMD_CLONES void backward_rows(const double* dy, const double* x, const double* g, const double* r, double* dx,
                                     double* dg, int64_t D, int64_t r0, int64_t r1) {
  backward(dy, x, g, r, dx, dg, D, r0, r1);
}

}  // namespace ember::rms_norm::cpu
