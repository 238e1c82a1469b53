// Per-element math of the fused softmax cross-entropy over rows of logits (the loss head), shared by
// the CPU loops and the CUDA kernel; no ATen. For one row z [V] at output scale s, target y and
// gradient factor g (1/N of the mean over the N counted rows, times the caller's loss scale):
//   m = max_j s z_j,  l = sum_j exp(s z_j - m),  lse = m + log l,  CE = lse - s z_y
//   dCE/dz_j * g = (exp(s z_j - lse) - [j = y]) s g, written over z in place.
// A row whose target is the ignore index gives CE = 0 and a zero gradient, its logits unread.
// The exponential is a branch-free polynomial (kernels/element_math.h).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/element_math.h"

#if defined(__CUDACC__)
#define EMBER_XENT_HD __host__ __device__ __forceinline__
#else
#define EMBER_XENT_HD inline
#endif

namespace ember::xent {

using elements::Bf16;
using elements::exp_nonpositive;
using elements::store;
using elements::widen;

// max(a, b) that keeps a NaN from either side: how the CUDA kernel's threads combine their rows'
// maxima m + f (below), so that a NaN from one thread reaches the whole row.
template <class A>
EMBER_XENT_HD A max_nan(A a, A b) {
  return (b > a || b != b) ? b : a;
}

// A row's maximum is kept as a running maximum m (max_step) and a running sum f of v - v
// (nonfinite_step): 0 for a finite v, NaN for +inf, -inf or NaN. The row's maximum is m + f, so one
// non-finite logit anywhere makes the row's loss and gradient NaN on every device (train.on_nonfinite
// sees it), where a maximum alone would pass over a -inf. Neither depends on the order of the
// elements, so SIMD lanes and CUDA threads reduce them in any order and agree exactly.
template <class A>
EMBER_XENT_HD A max_step(A m, A v) {
  return m < v ? v : m;
}
template <class A>
EMBER_XENT_HD A nonfinite_step(A f, A v) {
  return f + (v - v);
}

// g / max(counted, 1): the gradient factor of a mean over the rows that count (not ignored); an
// empty mean gives 0, not NaN. In double, then cast, on every device.
EMBER_XENT_HD double mean_factor(double g, int64_t counted) {
  return g / static_cast<double>(counted > 1 ? counted : 1);
}

// Accumulation type of each storage type: fp32 for fp32 and bf16, fp64 for fp64.
template <class T>
struct Acc {
  using type = float;
};
template <>
struct Acc<double> {
  using type = double;
};

}  // namespace ember::xent
