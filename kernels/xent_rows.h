// Per-element math of the fused softmax cross-entropy over rows of logits (the loss head), shared by
// the CPU loops and the CUDA kernel; no ATen. For one row z [V] at output scale s, target y and
// gradient factor g (1/N of the mean, times the caller's loss scale):
//   m = max_j s z_j,  l = sum_j exp(s z_j - m),  lse = m + log l,  CE = lse - s z_y
//   dCE/dz_j * g = (exp(s z_j - lse) - [j = y]) s g, written over z in place.
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

// max(a, b) that propagates NaN from b (a NaN logit makes the loss NaN, so the step is seen as
// non-finite): the running maximum of a row is a, each new element b.
template <class A>
EMBER_XENT_HD A max_nan(A a, A b) {
  return (b > a || b != b) ? b : a;
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
