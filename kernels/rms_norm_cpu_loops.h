// Inner loops of the fused CPU RMSNorm (no ATen) over a range of rows of x [rows, D] (contiguous):
// y = x r g with r = 1 / sqrt(mean_j x_j^2 + eps), and its gradient. The caller splits rows across
// threads. Built with -O3 and cloned for AVX2+FMA and AVX-512.
#pragma once
#include <cstdint>

namespace ember::rms_norm::cpu {

// y rows and r[row] for rows [r0, r1).
void forward_rows(const float* x, const float* g, float* y, float* r, int64_t D, double eps, int64_t r0, int64_t r1);
void forward_rows(const double* x, const double* g, double* y, double* r, int64_t D, double eps, int64_t r0,
                  int64_t r1);

// dx rows for rows [r0, r1), and dg += sum over those rows of dy x r (in fp64: many rows):
//   dx_i = r (g_i dy_i) - r^3 x_i / D * sum_j x_j g_j dy_j.
void backward_rows(const float* dy, const float* x, const float* g, const float* r, float* dx, double* dg, int64_t D,
                   int64_t r0, int64_t r1);
void backward_rows(const double* dy, const double* x, const double* g, const double* r, double* dx, double* dg,
                   int64_t D, int64_t r0, int64_t r1);

}  // namespace ember::rms_norm::cpu
