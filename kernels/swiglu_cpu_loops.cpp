#include "kernels/swiglu_cpu_loops.h"

#include "kernels/simd_clones.h"

namespace ember::swiglu::cpu {
namespace {

template <class T>
inline __attribute__((always_inline)) void forward(const T* a, const T* b, T* z, const Rows& s, int64_t r0,
                                                   int64_t r1) {
  for (int64_t r = r0; r < r1; ++r) {
    const T* ar = a + r * s.a;
    const T* br = b + r * s.b;
    T* zr = z + r * s.z;
#pragma omp simd
    for (int64_t i = 0; i < s.width; ++i) store(gate(widen(ar[i]), widen(br[i])), zr + i);
  }
}

template <class T>
inline __attribute__((always_inline)) void backward(const T* a, const T* b, const T* dz, T* da, T* db, const Rows& s,
                                                    int64_t r0, int64_t r1) {
  using M = decltype(widen(T{}));
  for (int64_t r = r0; r < r1; ++r) {
    const T* ar = a + r * s.a;
    const T* br = b + r * s.b;
    const T* dzr = dz + r * s.dz;
    T* dar = da + r * s.da;
    T* dbr = db + r * s.db;
#pragma omp simd
    for (int64_t i = 0; i < s.width; ++i) {
      M ga, gb;
      gate_grad(widen(ar[i]), widen(br[i]), widen(dzr[i]), ga, gb);
      store(ga, dar + i);
      store(gb, dbr + i);
    }
  }
}

}  // namespace

EMBER_SIMD_CLONES void forward_rows(const float* a, const float* b, float* z, const Rows& s, int64_t r0, int64_t r1) {
  forward(a, b, z, s, r0, r1);
}
EMBER_SIMD_CLONES void forward_rows(const double* a, const double* b, double* z, const Rows& s, int64_t r0,
                                    int64_t r1) {
  forward(a, b, z, s, r0, r1);
}
EMBER_SIMD_CLONES void forward_rows(const Bf16* a, const Bf16* b, Bf16* z, const Rows& s, int64_t r0, int64_t r1) {
  forward(a, b, z, s, r0, r1);
}

EMBER_SIMD_CLONES void backward_rows(const float* a, const float* b, const float* dz, float* da, float* db,
                                     const Rows& s, int64_t r0, int64_t r1) {
  backward(a, b, dz, da, db, s, r0, r1);
}
EMBER_SIMD_CLONES void backward_rows(const double* a, const double* b, const double* dz, double* da, double* db,
                                     const Rows& s, int64_t r0, int64_t r1) {
  backward(a, b, dz, da, db, s, r0, r1);
}
EMBER_SIMD_CLONES void backward_rows(const Bf16* a, const Bf16* b, const Bf16* dz, Bf16* da, Bf16* db, const Rows& s,
                                     int64_t r0, int64_t r1) {
  backward(a, b, dz, da, db, s, r0, r1);
}

}  // namespace ember::swiglu::cpu
