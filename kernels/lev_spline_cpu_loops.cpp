// Vectorised inner loops of the fused CPU LEV spline kernels (see lev_spline_cpu_loops.h), written
// with GCC/Clang vector extensions: 64-byte vectors of rank lanes, which the AVX-512 clone maps to
// one register, the AVX2 clone to two and the default clone to four.
// Forward, per (token, head): the basis windows of all d_s seed dimensions are computed in one
// vectorised pass, then each dimension multiplies its factor |phi| + 1e-9 into a running product
// held in registers. The product is kept as mantissa * 2^exponent: every 4 factors the exponent
// bits move into an integer, so it cannot underflow (factors >= 1e-9) for any d_s; a lane whose
// 4-factor product overflows or meets NaN is recomputed in log space, as are the lanes past the
// last full vector. Backward, per (head, seed dimension): tokens in blocks, so that the gradient rows of S stay
// in L1 and the block's grad_M * M rows in L2. Rank lanes beyond a multiple of the vector width
// take a scalar path with the same math.
#include "kernels/lev_spline_cpu_loops.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/lev_spline_math.h"
#include "kernels/simd_clones.h"

#define EMBER_INLINE inline __attribute__((always_inline))

namespace ember::lev::cpu {
namespace {

constexpr int kRenormEvery = 4;  // factors per mantissa/exponent split
// Rank vectors per forward pass: 4 (64 float lanes) fill AVX-512's 32 registers; AVX2's 16 hold
// one (4 spill: a whole fused generator step 10% slower, bench/RESULTS.md, 2026-12-05).
constexpr int kVectorsWide = 4, kVectorsNarrow = 1;
constexpr int64_t kTokenBlock = 64;

// Lane types of one 64-byte vector: values, their bits (unsigned) and exponents (signed).
template <class T>
struct Lanes {
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  using Exponent = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  typedef T V __attribute__((vector_size(64)));
  typedef Bits U __attribute__((vector_size(64)));
  typedef Exponent I __attribute__((vector_size(64)));
  static constexpr int kCount = 64 / sizeof(T);
  static constexpr int kMantissaBits = sizeof(T) == 4 ? 23 : 52;
  static constexpr Exponent kBias = sizeof(T) == 4 ? 127 : 1023;
  static constexpr Bits kSign = Bits(1) << (8 * sizeof(T) - 1);
  static constexpr Bits kOne = Bits(kBias) << kMantissaBits;  // the bits of 1.0
  static constexpr Bits kMantissa = (Bits(1) << kMantissaBits) - 1;
};

template <class V, class T>
EMBER_INLINE V load(const T* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <class V, class T>
EMBER_INLINE void store(T* p, V v) {
  std::memcpy(p, &v, sizeof v);
}

// p = m * 2^e with m in [1, 2): adds e to `expo` and leaves m in p (p > 0 and normal), for a
// vector of lanes; lanes that hold NaN or inf (exponent field all ones) are flagged in `bad`.
template <class T>
EMBER_INLINE void split_exponent(typename Lanes<T>::V& p, typename Lanes<T>::I& expo, typename Lanes<T>::I& bad) {
  using L = Lanes<T>;
  using I = typename L::I;
  typename L::U b;
  std::memcpy(&b, &p, sizeof b);
  const I field = (I)(b >> L::kMantissaBits) & (2 * L::kBias + 1);  // the biased exponent
  bad |= (I)(field == 2 * L::kBias + 1);
  expo += field - L::kBias;
  b = (b & L::kMantissa) | L::kOne;
  std::memcpy(&p, &b, sizeof b);
}

// m * 2^e for m in [1, 2), exact unless the result is subnormal (one rounding), 0 or inf when it
// leaves the range: two power-of-two factors with clamped exponents.
template <class T>
EMBER_INLINE typename Lanes<T>::V scale_by_power_of_two(typename Lanes<T>::V m, typename Lanes<T>::I e) {
  using L = Lanes<T>;
  using I = typename L::I;
  auto power = [](I x) __attribute__((always_inline)) {
    x = x < 1 - L::kBias ? I{} + (1 - L::kBias) : x;
    x = x > L::kBias ? I{} + L::kBias : x;
    typename L::V out;
    const typename L::U bits = (typename L::U)(x + L::kBias) << L::kMantissaBits;
    std::memcpy(&out, &bits, sizeof out);
    return out;
  };
  const I half = e >> 1;
  return m * power(half) * power(e - half);
}

// Basis windows of count values of x into structure-of-arrays outputs (vectorised over x).
template <class T, bool kNormalize>
EMBER_INLINE void fill_windows(const T* __restrict x, int64_t count, int kappa, int32_t* __restrict first,
                               T* __restrict b0, T* __restrict b1, T* __restrict b2, T* __restrict db0,
                               T* __restrict db1, T* __restrict db2) {
  EMBER_IVDEP  // the outputs never alias (restrict is lost once this is inlined)
      for (int64_t i = 0; i < count; ++i) {
    int f;
    basis_weights<T>(x[i], kappa, kNormalize, f, b0[i], b1[i], b2[i], db0[i], db1[i], db2[i]);
    first[i] = f;
  }
}

// Structure-of-arrays basis windows of a run of seed dimensions.
template <class T>
struct Windows {
  explicit Windows(int64_t n) : first(n), v0(n), v1(n), v2(n), d0(n), d1(n), d2(n) {}
  std::vector<int32_t> first;
  std::vector<T> v0, v1, v2, d0, d1, d2;

  EMBER_INLINE void fill(const T* x, int64_t count, int64_t at, int kappa, bool normalize) {
    int32_t* f = first.data() + at;
    T *b0 = v0.data() + at, *b1 = v1.data() + at, *b2 = v2.data() + at;
    T *db0 = d0.data() + at, *db1 = d1.data() + at, *db2 = d2.data() + at;
    if (normalize)  // a compile-time flag keeps the loop free of branches
      fill_windows<T, true>(x, count, kappa, f, b0, b1, b2, db0, db1, db2);
    else
      fill_windows<T, false>(x, count, kappa, f, b0, b1, b2, db0, db1, db2);
  }
};

// M[rho] of one (token, head) in log space, sign * exp(sum_d log(|phi_d| + 1e-9)) in double as
// the spec writes it: the path for the lanes past the last full vector and for lanes that met
// NaN or overflowed within 4 factors (propagates NaN and inf like the reference).
template <class T>
T product_log_space(const T* S_l, const Windows<T>& w, const Shape& s, int64_t rho) {
  double log_sum = 0.0;
  bool negative = false;
  for (int64_t d = 0; d < s.DS; ++d) {
    const T* row = S_l + (d * s.K + w.first[d]) * s.R + rho;
    const T phi = w.v0[d] * row[0] + w.v1[d] * row[s.R] + w.v2[d] * row[2 * s.R];
    negative ^= phi < T(0);
    log_sum += std::log(static_cast<double>(abs_eps(phi)));
  }
  const double m = std::exp(log_sum);
  return static_cast<T>(negative ? -m : m);
}

// M[rho0 .. rho0 + NV * lanes) of one (token, head) = sign * prod_d (|phi_d| + 1e-9), with
// phi_d = sum_j B~_j(u_d) S[l, d, first_d + j, rho] (steps 5-6); S_l = S[l].
template <class T, int NV>
EMBER_INLINE void product_vectors(const T* S_l, const Windows<T>& w, const Shape& s, int64_t rho0, T* out) {
  using L = Lanes<T>;
  using V = typename L::V;
  using U = typename L::U;
  using I = typename L::I;
  V prod[NV];
  U neg[NV];
  I expo[NV], bad[NV];
  for (int j = 0; j < NV; ++j) prod[j] = V{} + T(1), neg[j] = U{}, expo[j] = I{}, bad[j] = I{};
  for (int64_t d = 0; d < s.DS; ++d) {
    const T* row = S_l + (d * s.K + w.first[d]) * s.R + rho0;
    const T v0 = w.v0[d], v1 = w.v1[d], v2 = w.v2[d];
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) {
      const int64_t at = j * L::kCount;
      const V phi = v0 * load<V>(row + at) + v1 * load<V>(row + s.R + at) + v2 * load<V>(row + 2 * s.R + at);
      neg[j] ^= (U)(phi < T(0)) & L::kSign;  // a comparison, so that -0.0 counts as positive
      prod[j] *= (V)((U)phi & ~L::kSign) + T(kLogEps);
    }
    if (d % kRenormEvery == kRenormEvery - 1)
      for (int j = 0; j < NV; ++j) split_exponent<T>(prod[j], expo[j], bad[j]);
  }
  for (int j = 0; j < NV; ++j) {
    split_exponent<T>(prod[j], expo[j], bad[j]);
    store(out + j * L::kCount, (V)((U)scale_by_power_of_two<T>(prod[j], expo[j]) ^ neg[j]));
    for (int k = 0; k < L::kCount; ++k)
      if (bad[j][k]) out[j * L::kCount + k] = product_log_space(S_l, w, s, rho0 + j * L::kCount + k);
  }
}

template <class T, int kVectors>
EMBER_INLINE void forward_impl(const T* u, const T* S, T* M, const Shape& s, bool normalize, int64_t l, int64_t n0,
                               int64_t n1) {
  constexpr int64_t lanes = Lanes<T>::kCount;
  Windows<T> w(s.DS);
  const T* S_l = S + l * s.DS * s.K * s.R;
  for (int64_t n = n0; n < n1; ++n) {
    const int64_t nl = n * s.H + l;
    w.fill(u + nl * s.DS, s.DS, 0, static_cast<int>(s.K), normalize);
    T* out = M + nl * s.R;
    int64_t rho = 0;
    for (; rho + kVectors * lanes <= s.R; rho += kVectors * lanes)
      product_vectors<T, kVectors>(S_l, w, s, rho, out + rho);
    for (; rho + lanes <= s.R; rho += lanes) product_vectors<T, 1>(S_l, w, s, rho, out + rho);
    for (; rho < s.R; ++rho) out[rho] = product_log_space(S_l, w, s, rho);
  }
}

// One basis window and the rows it touches, for the backward of one (token, head, dimension).
template <class T>
struct ElementRows {
  const T* S0;   // S[l, d, first, :]; the next two knots follow at +R and +2R
  T* gS0;        // the same rows of grad S
  const T* gmm;  // (grad_M * M)[n, l, :]
  T v[3], dv[3];
  int64_t R;
};

// dM/dphi_d = M sign(phi_d) / (|phi_d| + 1e-9), sign(0) = 0, for rank lane(s) at `at`: accumulates grad S and
// returns the lanes' contribution g_phi * dphi/du to grad u. P is T or a vector of T.
template <class T, class P>
EMBER_INLINE P backward_lanes(const ElementRows<T>& e, int64_t at) {
  using L = Lanes<T>;
  const P s0 = load<P>(e.S0 + at), s1 = load<P>(e.S0 + e.R + at), s2 = load<P>(e.S0 + 2 * e.R + at);
  const P phi = e.v[0] * s0 + e.v[1] * s1 + e.v[2] * s2;
  const P dphi = e.dv[0] * s0 + e.dv[1] * s1 + e.dv[2] * s2;
  const P gmm = load<P>(e.gmm + at);
  P g_phi;
  if constexpr (std::is_same_v<P, T>) {
    g_phi = product_grad(gmm, phi);
  } else {
    using U = typename L::U;
    g_phi = (P)((U)gmm ^ ((U)(phi < T(0)) & L::kSign)) / ((P)((U)phi & ~L::kSign) + T(kLogEps));
    g_phi = (P)((U)g_phi & (U)(phi != T(0)));  // sign(0) = 0
  }
  for (int j = 0; j < 3; ++j) {
    T* g = e.gS0 + j * e.R + at;
    store(g, load<P>(g) + e.v[j] * g_phi);
  }
  return g_phi * dphi;
}

// Sum of the lanes of a vector, as a fixed tree of halves (deterministic).
template <class T>
EMBER_INLINE T horizontal_sum(typename Lanes<T>::V v) {
  typedef T Half __attribute__((vector_size(32)));
  typedef T Quarter __attribute__((vector_size(16)));
  Half a, b;
  std::memcpy(&a, &v, sizeof a);
  std::memcpy(&b, reinterpret_cast<const char*>(&v) + sizeof a, sizeof b);
  const Half h = a + b;
  Quarter c, d;
  std::memcpy(&c, &h, sizeof c);
  std::memcpy(&d, reinterpret_cast<const char*>(&h) + sizeof c, sizeof d);
  const Quarter q = c + d;
  T sum = 0;
  for (int k = 0; k < static_cast<int>(sizeof q / sizeof(T)); ++k) sum += q[k];
  return sum;
}

template <class T>
EMBER_INLINE T backward_element(const ElementRows<T>& e) {
  using V = typename Lanes<T>::V;
  constexpr int64_t lanes = Lanes<T>::kCount;
  V acc{};
  int64_t rho = 0;
  for (; rho + lanes <= e.R; rho += lanes) acc += backward_lanes<T, V>(e, rho);
  T gu = horizontal_sum<T>(acc);
  for (; rho < e.R; ++rho) gu += backward_lanes<T, T>(e, rho);
  return gu;
}

template <class T>
EMBER_INLINE void backward_impl(const T* gMM, const T* u, const T* S, T* gU, T* gS, const Shape& s, bool normalize,
                                int64_t l, int64_t d0, int64_t d1) {
  const int64_t R = s.R, width = d1 - d0;
  Windows<T> w(kTokenBlock * width);
  for (int64_t b0 = 0; b0 < s.N; b0 += kTokenBlock) {
    const int64_t count = std::min(kTokenBlock, s.N - b0);
    for (int64_t i = 0; i < count; ++i)
      w.fill(u + ((b0 + i) * s.H + l) * s.DS + d0, width, i * width, static_cast<int>(s.K), normalize);
    for (int64_t d = d0; d < d1; ++d) {
      const int64_t row0 = (l * s.DS + d) * s.K * R;
      for (int64_t i = 0; i < count; ++i) {
        const int64_t at = i * width + (d - d0), nl = (b0 + i) * s.H + l, off = row0 + w.first[at] * R;
        const ElementRows<T> e{
            S + off, gS + off, gMM + nl * R, {w.v0[at], w.v1[at], w.v2[at]}, {w.d0[at], w.d1[at], w.d2[at]}, R};
        gU[nl * s.DS + d] = backward_element(e);
      }
    }
  }
}

// The vectors per pass for this CPU (the x86-64-v4 clone runs only where AVX-512 is).
template <class T>
EMBER_INLINE void forward_dispatch(const T* u, const T* S, T* M, const Shape& s, bool normalize, int64_t l, int64_t n0,
                                   int64_t n1) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (!__builtin_cpu_supports("avx512f")) return forward_impl<T, kVectorsNarrow>(u, S, M, s, normalize, l, n0, n1);
#endif
  forward_impl<T, kVectorsWide>(u, S, M, s, normalize, l, n0, n1);
}

}  // namespace

EMBER_SIMD_CLONES void forward_tokens(const float* u, const float* S, float* M, const Shape& s, bool normalize,
                                      int64_t l, int64_t n0, int64_t n1) {
  forward_dispatch(u, S, M, s, normalize, l, n0, n1);
}

EMBER_SIMD_CLONES void forward_tokens(const double* u, const double* S, double* M, const Shape& s, bool normalize,
                                      int64_t l, int64_t n0, int64_t n1) {
  forward_dispatch(u, S, M, s, normalize, l, n0, n1);
}

EMBER_SIMD_CLONES void backward_dims(const float* gMM, const float* u, const float* S, float* gU, float* gS,
                                     const Shape& s, bool normalize, int64_t l, int64_t d0, int64_t d1) {
  backward_impl(gMM, u, S, gU, gS, s, normalize, l, d0, d1);
}

EMBER_SIMD_CLONES void backward_dims(const double* gMM, const double* u, const double* S, double* gU, double* gS,
                                     const Shape& s, bool normalize, int64_t l, int64_t d0, int64_t d1) {
  backward_impl(gMM, u, S, gU, gS, s, normalize, l, d0, d1);
}

}  // namespace ember::lev::cpu
