// Per-element math of RMSNorm with the residual add before it (docs/mixers.md, the chassis), shared
// by the CPU loops and the CUDA kernel; no ATen. For one row of the stream x, an optional block
// output m (none: h is x) and the gain g [D]:
//   h = x + m,   r = 1 / sqrt(mean_j h_j^2 + eps),   y = h r g
// and backward, with dh the gradient reaching h along the stream (zero if none) and dy that of y:
//   dx = dm = dh + r g dy - k h,   k = r^3 / D sum_j h_j g_j dy_j,   dg = sum over rows of dy h r.
// Storage: x, h, g, r and dx in fp32 or fp64 (the stream's type); m, y, dy and dm in the stream's
// type or bf16. Computed in the stream's type.
#pragma once
#include <cmath>
#include <cstdint>

#include "kernels/element_math.h"

namespace ember::rms_norm {

using elements::Bf16;
using elements::store;
using elements::widen;

struct Shape {
  int64_t rows, D;
  double eps;
};

// r = 1 / sqrt(mean_j h_j^2 + eps) from the row's sum of squares
template <class S>
EMBER_HD S inverse_rms(S sum_squares, int64_t D, double eps) {
  using std::sqrt;
  return S(1) / sqrt(sum_squares / S(D) + S(eps));
}

// y_i = h_i r g_i
template <class S>
EMBER_HD S normed(S h, S r, S g) {
  return h * r * g;
}

// k = r^3 / D sum_j h_j g_j dy_j, from that sum
template <class S>
EMBER_HD S back_coefficient(S r, S h_g_dy, int64_t D) {
  return r * r * r * h_g_dy / S(D);
}

// dx_i = dh_i + r g_i dy_i - k h_i
template <class S>
EMBER_HD S stream_grad(S dh, S dy, S h, S r, S g, S k) {
  return dh + r * g * dy - k * h;
}

}  // namespace ember::rms_norm
