// Inner loops of the fused CPU LEV spline kernels over raw arrays (no ATen): one (head, token
// range) of the forward and one (head, seed-dimension range) of the backward. The caller splits
// the work across threads; every call writes a disjoint part of its outputs. The translation unit
// is built with -O3 and cloned for AVX2+FMA and AVX-512 with run-time dispatch (x86-64 GCC/Clang).
// Layouts: u [N, H, DS], S and gS [H, DS, K, R], M and gMM [N, H, R], gU [N, H, DS].
#pragma once
#include <cstdint>

namespace ember::lev::cpu {

struct Shape {
  int64_t N, H, DS, K, R;
};

// M[n, l, :] = prod_d phi[n, l, d, :] for tokens n in [n0, n1) of head l.
void forward_tokens(const float* u, const float* S, float* M, const Shape& s, bool normalize, int64_t l, int64_t n0,
                    int64_t n1);
void forward_tokens(const double* u, const double* S, double* M, const Shape& s, bool normalize, int64_t l, int64_t n0,
                    int64_t n1);

// For seed dimensions d in [d0, d1) of head l and every token: gU[n, l, d] and the (accumulated)
// gS[l, d, :, :], given gMM = grad_M * M.
void backward_dims(const float* gMM, const float* u, const float* S, float* gU, float* gS, const Shape& s,
                   bool normalize, int64_t l, int64_t d0, int64_t d1);
void backward_dims(const double* gMM, const double* u, const double* S, double* gU, double* gS, const Shape& s,
                   bool normalize, int64_t l, int64_t d0, int64_t d1);

}  // namespace ember::lev::cpu
