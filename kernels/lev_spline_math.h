// Per-element math of the LEV spline generator (spec/leviathan.md, steps 4-6), shared by the CPU
// and CUDA kernels: EMBER_HD marks functions for both host and device compilers.
#pragma once

#include <cmath>

#if defined(__CUDACC__)
#define EMBER_HD __host__ __device__ __forceinline__
#else
#define EMBER_HD inline
#endif

namespace ember::lev {

constexpr float kLogEps = 1e-9f;  // M = sign * exp(sum_d log(|phi_d| + 1e-9)), step 6

// Quadratic B-spline bump of the distance t = |x - g_m| (kappa - 1), step 4:
// 0.75 - t^2 (t < 0.5), 0.5 (1.5 - t)^2 (0.5 <= t < 1.5), 0 otherwise.
template <class T>
EMBER_HD T bspline2(T t) {
  if (t < T(0.5)) return T(0.75) - t * t;
  if (t < T(1.5)) return T(0.5) * (T(1.5) - t) * (T(1.5) - t);
  return T(0);
}

// d bspline2 / dt
template <class T>
EMBER_HD T bspline2_dt(T t) {
  if (t < T(0.5)) return T(-2) * t;
  if (t < T(1.5)) return -(T(1.5) - t);
  return T(0);
}

// The (at most 3) knots with non-zero basis at x in [0, 1] on the grid g_m = m / (kappa - 1):
// the first knot index, the basis values and their derivatives d/dx, normalised by their sum
// when `normalize` (a partition of unity, also at the ends of [0, 1]).
template <class T>
struct Window {
  int first;
  int count;
  T value[3];
  T deriv[3];
};

template <class T>
EMBER_HD Window<T> basis_window(T x, int kappa, bool normalize) {
  const T scale = T(kappa - 1);
  const T p = x * scale;
  int centre = static_cast<int>(p + T(0.5));  // nearest knot; x in [0, 1] so p >= 0
  Window<T> w{};
  w.first = centre - 1 < 0 ? 0 : centre - 1;
  const int last = centre + 1 > kappa - 1 ? kappa - 1 : centre + 1;
  w.count = last - w.first + 1;
  T sum = T(0), dsum = T(0);
  for (int j = 0; j < w.count; ++j) {
    const T diff = p - T(w.first + j);
    const T t = diff < T(0) ? -diff : diff;
    const T sgn = diff < T(0) ? T(-1) : T(1);
    w.value[j] = bspline2(t);
    w.deriv[j] = bspline2_dt(t) * sgn * scale;  // dt/dx = scale * sign(x - g_m)
    sum += w.value[j];
    dsum += w.deriv[j];
  }
  if (normalize) {  // B~_m = B_m / S, dB~_m = (B'_m S - B_m S') / S^2
    for (int j = 0; j < w.count; ++j) {
      w.deriv[j] = (w.deriv[j] * sum - w.value[j] * dsum) / (sum * sum);
      w.value[j] = w.value[j] / sum;
    }
  }
  return w;
}

template <class T>
EMBER_HD T abs_eps(T phi) {
  return (phi < T(0) ? -phi : phi) + T(kLogEps);
}

}  // namespace ember::lev
