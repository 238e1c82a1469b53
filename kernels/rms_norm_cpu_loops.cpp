#include "kernels/rms_norm_cpu_loops.h"

#include "kernels/simd_clones.h"

namespace ember::rms_norm::cpu {
namespace {

constexpr int64_t kLanes = 16;  // independent partial sums, so that the reduction vectorises

// sum_i f(i), accumulated in kLanes lanes (a fixed order: the same result on every CPU path).
template <class S, class F>
inline __attribute__((always_inline)) S lane_sum(int64_t n, F f) {
  S lane[kLanes] = {};
  const int64_t whole = n / kLanes * kLanes;
  for (int64_t i = 0; i < whole; i += kLanes)
    for (int64_t l = 0; l < kLanes; ++l) lane[l] += f(i + l);
  S sum = 0;
  for (int64_t l = 0; l < kLanes; ++l) sum += lane[l];
  for (int64_t i = whole; i < n; ++i) sum += f(i);
  return sum;
}

template <class S, class M, class Y>
inline __attribute__((always_inline)) void forward(const S* x, const M* m, const S* g, S* h, Y* y, S* r,
                                                   const Shape& shape, int64_t r0, int64_t r1) {
  const int64_t D = shape.D;
  for (int64_t row = r0; row < r1; ++row) {
    const S* xr = x + row * D;
    if (m) {
      const M* mr = m + row * D;
      S* hr = h + row * D;
#pragma omp simd
      for (int64_t i = 0; i < D; ++i) hr[i] = xr[i] + widen(mr[i]);
      xr = hr;  // the norm reads the sum
    }
    const S rr = inverse_rms(lane_sum<S>(D, [&](int64_t i) { return xr[i] * xr[i]; }), D, shape.eps);
    r[row] = rr;
    Y* yr = y + row * D;
#pragma omp simd
    for (int64_t i = 0; i < D; ++i) store(normed(xr[i], rr, g[i]), yr + i);
  }
}

template <class S, class M, class Y>
inline __attribute__((always_inline)) void backward(const S* dh, const Y* dy, const S* h, const S* g, const S* r,
                                                    S* dx, M* dm, double* dg, const Shape& shape, int64_t r0,
                                                    int64_t r1) {
  const int64_t D = shape.D;
  for (int64_t row = r0; row < r1; ++row) {
    const Y* dyr = dy + row * D;
    const S* hr = h + row * D;
    S* dxr = dx + row * D;
    const S rr = r[row];
    const S k = back_coefficient(rr, lane_sum<S>(D, [&](int64_t i) { return hr[i] * g[i] * widen(dyr[i]); }), D);
    if (dh) {
      const S* dhr = dh + row * D;
#pragma omp simd
      for (int64_t i = 0; i < D; ++i) dxr[i] = stream_grad(dhr[i], S(widen(dyr[i])), hr[i], rr, g[i], k);
    } else {
#pragma omp simd
      for (int64_t i = 0; i < D; ++i) dxr[i] = stream_grad(S(0), S(widen(dyr[i])), hr[i], rr, g[i], k);
    }
    if (dm) {
      M* dmr = dm + row * D;
#pragma omp simd
      for (int64_t i = 0; i < D; ++i) store(dxr[i], dmr + i);
    }
#pragma omp simd
    for (int64_t i = 0; i < D; ++i) dg[i] += static_cast<double>(S(widen(dyr[i])) * hr[i] * rr);
  }
}

}  // namespace

#define EMBER_RMS_NORM_ROWS(S, M, Y)                                                                              \
  EMBER_SIMD_CLONES void forward_rows(const S* x, const M* m, const S* g, S* h, Y* y, S* r, const Shape& shape,  \
                                      int64_t r0, int64_t r1) {                                                   \
    forward(x, m, g, h, y, r, shape, r0, r1);                                                                     \
  }                                                                                                               \
  EMBER_SIMD_CLONES void backward_rows(const S* dh, const Y* dy, const S* h, const S* g, const S* r, S* dx,      \
                                       M* dm, double* dg, const Shape& shape, int64_t r0, int64_t r1) {          \
    backward(dh, dy, h, g, r, dx, dm, dg, shape, r0, r1);                                                         \
  }
EMBER_RMS_NORM_ROWS(float, float, float)
EMBER_RMS_NORM_ROWS(float, Bf16, float)
EMBER_RMS_NORM_ROWS(float, float, Bf16)
EMBER_RMS_NORM_ROWS(float, Bf16, Bf16)
EMBER_RMS_NORM_ROWS(double, double, double)

}  // namespace ember::rms_norm::cpu
