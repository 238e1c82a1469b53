// Element types and math shared by ember's CPU loops and CUDA kernels (kernels/xent_rows.h,
// kernels/swiglu_math.h): bfloat16 storage with its widening and round-to-nearest-even store, and a
// branch-free exponential that vectorises. EMBER_HD marks functions for both compilers. No ATen.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#ifndef EMBER_HD
#if defined(__CUDACC__)
#define EMBER_HD __host__ __device__ __forceinline__
#else
#define EMBER_HD inline
#endif
#endif

namespace ember::elements {

struct Bf16 {  // bfloat16 storage: the high half of an IEEE float
  uint16_t bits;
};

EMBER_HD float widen(float v) { return v; }
EMBER_HD double widen(double v) { return v; }
EMBER_HD float widen(Bf16 v) {
  const uint32_t u = static_cast<uint32_t>(v.bits) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

EMBER_HD void store(float v, float* out) { *out = v; }
EMBER_HD void store(double v, double* out) { *out = v; }
EMBER_HD void store(float v, Bf16* out) {  // round to nearest even; NaN stays NaN
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
EMBER_HD float exp_nonpositive(float x) {
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
EMBER_HD double exp_nonpositive(double x) { return exp(x); }

}  // namespace ember::elements
