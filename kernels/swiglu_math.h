// Per-element math of SwiGLU's gate z = SiLU(a) * b (docs/mixers.md, the chassis) and of its
// gradient, shared by the CPU loops and the CUDA kernel, and the rows both walk. No ATen.
// Storage is fp32, fp64 or bf16 (computed in fp32, rounded once to nearest even).
#pragma once
#include <cmath>
#include <cstdint>

#include "kernels/element_math.h"

namespace ember::swiglu {

using elements::Bf16;
using elements::store;
using elements::widen;

// n rows of `width` elements: unit stride within a row, each array with its own row stride (in
// elements), so the two halves of a stacked [rows, 2 width] projection are read and written in place.
struct Rows {
  int64_t n, width;
  int64_t a, b;    // row strides of the operands
  int64_t z;       // forward: of the result
  int64_t dz;      // backward: of the incoming gradient
  int64_t da, db;  // backward: of the two gradients
};

// sigmoid(a) = 1 / (1 + e^-a), from e = e^-|a| <= 1 so that nothing overflows: 1 / (1 + e) for
// a >= 0, e / (1 + e) below. fp32 through the branch-free exponential (vectorises), fp64 exp().
EMBER_HD float sigmoid(float a) {
  const float e = elements::exp_nonpositive(a < 0.0f ? a : -a), inv = 1.0f / (1.0f + e);
  return a < 0.0f ? e * inv : inv;
}
EMBER_HD double sigmoid(double a) {
  using std::exp;
  return 1.0 / (1.0 + exp(-a));
}

// z = SiLU(a) b = a sigmoid(a) b
template <class M>
EMBER_HD M gate(M a, M b) {
  return a * sigmoid(a) * b;
}

// dL/da = dz b (s + a s (1 - s)) (d/da of a s, s = sigmoid(a)), dL/db = dz a s
template <class M>
EMBER_HD void gate_grad(M a, M b, M dz, M& da, M& db) {
  const M s = sigmoid(a), silu = a * s;
  da = dz * b * (s + silu * (M(1) - s));
  db = dz * silu;
}

}  // namespace ember::swiglu
