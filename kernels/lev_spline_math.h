// Per-element math of the LEV spline generator (docs/leviathan.md, steps 4-6), shared by the CPU
// and CUDA kernels: EMBER_HD marks functions for both host and device compilers.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/element_math.h"  // EMBER_HD

namespace ember::lev {

constexpr float kLogEps = 1e-9f;  // M = sign * exp(sum_d log(|phi_d| + 1e-9)), step 6

// Quadratic B-spline bump of the distance t = |x - g_m| (kappa - 1), step 4:
// 0.75 - t^2 (t < 0.5), 0.5 (1.5 - t)^2 (0.5 <= t < 1.5), 0 otherwise. Written as selects so
// that loops over elements vectorise.
template <class T>
EMBER_HD T bspline2(T t) {
  const T outer = t < T(1.5) ? T(0.5) * (T(1.5) - t) * (T(1.5) - t) : T(0);
  return t < T(0.5) ? T(0.75) - t * t : outer;
}

// d bspline2 / dt
template <class T>
EMBER_HD T bspline2_dt(T t) {
  const T outer = t < T(1.5) ? -(T(1.5) - t) : T(0);
  return t < T(0.5) ? T(-2) * t : outer;
}

// The 3 consecutive knots that hold every non-zero basis value at x in [0, 1] on the grid
// g_m = m / (kappa - 1) (kappa >= 3): the first knot index, the basis values and their
// derivatives d/dx, normalised by their sum when `normalize` (a partition of unity, also at the
// ends of [0, 1]). At the ends the window is clamped inside the grid; its extra knot is 1.5 or
// more away, so its value is 0. A fixed width of 3 lets the kernels vectorise over the rank.
// The bump and its derivative d/dx at the signed distance diff = p - m (p = x (kappa - 1)).
template <class T>
EMBER_HD T bspline2_at(T diff) {
  return bspline2(diff < T(0) ? -diff : diff);
}
template <class T>
EMBER_HD T bspline2_dx(T diff, T scale) {  // dt/dx = scale * sign(x - g_m)
  return diff < T(0) ? -bspline2_dt(-diff) * scale : bspline2_dt(diff) * scale;
}

// Scalar form of the window, for loops that vectorise over x (one output per value and knot).
template <class T>
EMBER_HD void basis_weights(T x, int kappa, bool normalize, int& first, T& b0, T& b1, T& b2, T& db0, T& db1, T& db2) {
  const T scale = T(kappa - 1);
  const T p = x * scale;
  T nearest = p + T(0.5);  // clamped before the conversion, so NaN or a huge x stays defined
  nearest = nearest >= T(1) ? nearest : T(1);
  nearest = nearest <= T(kappa - 2) ? nearest : T(kappa - 2);
  first = static_cast<int>(nearest) - 1;                      // nearest knot - 1, within [0, kappa - 3]
  const T t0 = p - T(first), t1 = t0 - T(1), t2 = t0 - T(2);  // signed distances to the 3 knots
  b0 = bspline2_at(t0), b1 = bspline2_at(t1), b2 = bspline2_at(t2);
  db0 = bspline2_dx(t0, scale), db1 = bspline2_dx(t1, scale), db2 = bspline2_dx(t2, scale);
  if (normalize) {  // B~_m = B_m / S, dB~_m = (B'_m S - B_m S') / S^2; S >= 0.875 on [0, 1]
    const T inv = T(1) / (b0 + b1 + b2), dsum = db0 + db1 + db2;
    db0 = (db0 - b0 * dsum * inv) * inv, db1 = (db1 - b1 * dsum * inv) * inv, db2 = (db2 - b2 * dsum * inv) * inv;
    b0 *= inv, b1 *= inv, b2 *= inv;
  }
}

// The 3 consecutive knots that hold every non-zero basis value at x in [0, 1] on the grid
// g_m = m / (kappa - 1) (kappa >= 3): the first knot index, the basis values and their
// derivatives d/dx, normalised by their sum when `normalize` (a partition of unity, also at the
// ends of [0, 1]). At the ends the window is clamped inside the grid; its extra knot is 1.5 or
// more away, so its value is 0. A fixed width of 3 lets the kernels vectorise over the rank.
template <class T>
struct Window {
  int first;
  static constexpr int count = 3;
  T value[3];
  T deriv[3];
};

template <class T>
EMBER_HD Window<T> basis_window(T x, int kappa, bool normalize) {
  Window<T> w{};
  basis_weights(x, kappa, normalize, w.first, w.value[0], w.value[1], w.value[2], w.deriv[0], w.deriv[1], w.deriv[2]);
  return w;
}

template <class T>
EMBER_HD T abs_eps(T phi) {
  return (phi < T(0) ? -phi : phi) + T(kLogEps);
}

// phi = sum_j B_j(u) S[first + j] and dphi/du along one rank lane; row = S[l, d, first, rho], the
// next knots at +stride (step 5).
template <class T>
EMBER_HD void spline_at(const Window<T>& w, const T* row, int64_t stride, T& phi, T& dphi) {
  phi = T(0), dphi = T(0);
  for (int j = 0; j < Window<T>::count; ++j) {
    phi += w.value[j] * row[j * stride];
    dphi += w.deriv[j] * row[j * stride];
  }
}

// dL/dphi_d of M = sign * exp(sum_d log(|phi_d| + 1e-9)): (dL/dM) M sign(phi_d) / (|phi_d| + 1e-9),
// given gm_times_m = (dL/dM) M (step 6); sign(0) = 0, as autograd's |phi| has it.
template <class T>
EMBER_HD T product_grad(T gm_times_m, T phi) {
  if (phi == T(0)) return T(0);
  return (phi < T(0) ? -gm_times_m : gm_times_m) / abs_eps(phi);
}

}  // namespace ember::lev
