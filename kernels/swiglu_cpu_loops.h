// Inner loops of the fused CPU SwiGLU gate (no ATen) over a range of rows [r0, r1) (kernels/
// swiglu_math.h): z = SiLU(a) b and its gradient. bf16 elements are widened to fp32, computed, and
// rounded once to nearest even (kernels/element_math.h). The caller splits rows across threads. Built with -O3 and cloned
// for AVX2+FMA and AVX-512.
#pragma once
#include <cstdint>

#include "kernels/swiglu_math.h"

namespace ember::swiglu::cpu {

void forward_rows(const float* a, const float* b, float* z, const Rows& s, int64_t r0, int64_t r1);
void forward_rows(const double* a, const double* b, double* z, const Rows& s, int64_t r0, int64_t r1);
void forward_rows(const Bf16* a, const Bf16* b, Bf16* z, const Rows& s, int64_t r0, int64_t r1);

void backward_rows(const float* a, const float* b, const float* dz, float* da, float* db, const Rows& s, int64_t r0,
                   int64_t r1);
void backward_rows(const double* a, const double* b, const double* dz, double* da, double* db, const Rows& s,
                   int64_t r0, int64_t r1);
void backward_rows(const Bf16* a, const Bf16* b, const Bf16* dz, Bf16* da, Bf16* db, const Rows& s, int64_t r0,
                   int64_t r1);

}  // namespace ember::swiglu::cpu
