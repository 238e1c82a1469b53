// Per-element math of the fused softmax cross-entropy over rows of logits (the loss head), shared by
// the CPU loops and the CUDA kernel; no ATen. For one row z [V] at output scale s, target y and
// gradient factor g (1/N of the mean, times the caller's loss scale):
//   m = max_j s z_j,  l = sum_j exp(s z_j - m),  lse = m + log l,  CE = lse - s z_y
//   dCE/dz_j * g = (exp(s z_j - lse) - [j = y]) s g, written over z in place.
// The exponential is a branch-free polynomial (vectorises, ~1 ulp in fp32); fp64 uses exp().
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define EMBER_XENT_HD __host__ __device__ __forceinline__
#else
#define EMBER_XENT_HD inline
#endif

namespace ember::xent {

struct Bf16 {  // bfloat16 storage: the high half of an IEEE float
  uint16_t bits;
};

EMBER_XENT_HD float widen(float v) { return v; }
EMBER_XENT_HD double widen(double v) { return v; }
EMBER_XENT_HD float widen(Bf16 v) {
  const uint32_t u = static_cast<uint32_t>(v.bits) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

EMBER_XENT_HD void store(float v, float* out) { *out = v; }
EMBER_XENT_HD void store(double v, double* out) { *out = v; }
EMBER_XENT_HD void store(float v, Bf16* out) {  // round to nearest even; NaN stays NaN
  uint32_t u;
  std::memcpy(&u, &v, sizeof u);
  const bool nan = (u & 0x7fffffffu) > 0x7f800000u;
  const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  out->bits = static_cast<uint16_t>(nan ? ((u >> 16) | 0x40u) : rounded);
}

// exp(x) for x <= 0 up to rounding, in float without a branch: x = n ln2 + r, |r| <= ln2 / 2,
// exp(r) by its Taylor polynomial to r^7 (error < 6e-9 relative), 2^n from the exponent bits.
// Below -87.3 the result is clamped near the smallest normal float (a probability of 1e-38 is 0
// to the loss and to a bf16 gradient); NaN stays NaN.
EMBER_XENT_HD float exp_nonpositive(float x) {
  x = x < -87.3f ? -87.3f : x;
  const float t = x * 1.44269504f + 12582912.0f;  // + 1.5 * 2^23: the integer n = round(x / ln2) in t's low bits
  const float n = t - 12582912.0f;
  const float r = (x - n * 0.693145752f) - n * 1.42860677e-6f;  // ln2 split in two for accuracy
  float p = 1.98412698e-4f;                                       // 1/7!
  p = p * r + 1.38888889e-3f;
  p = p * r + 8.33333333e-3f;
  p = p * r + 4.16666667e-2f;
  p = p * r + 1.66666667e-1f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  int32_t tb;
  std::memcpy(&tb, &t, sizeof tb);
  const uint32_t scale_bits = static_cast<uint32_t>(tb - 0x4B400000 + 127) << 23;  // 2^n, n in [-126, 0]
  float two_n;
  std::memcpy(&two_n, &scale_bits, sizeof two_n);
  return p * two_n;
}
EMBER_XENT_HD double exp_nonpositive(double x) { return exp(x); }

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
