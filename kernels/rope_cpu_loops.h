// Inner loop of the fused CPU rotary embedding (no ATen): rotates a range of rows of x [B, H, T, 2h]
// into the rows of y (each with any strides over B, H, T; unit stride over the last dimension). The
// caller splits rows across threads. Built with -O3 and cloned for AVX2+FMA and AVX-512.
#pragma once
#include "kernels/rope_rows.h"

namespace ember::rope::cpu {

// y[r] = [x_a cos - x_b sin, x_b cos + x_a sin] at the row's position (rotate-half RoPE); inverse
// rotates by the negative angle (sin -> -sin), which is the rotation's transpose: its gradient.
// cos and sin are [positions, half] contiguous.
void rotate_rows(const float* x, float* y, const float* cos, const float* sin, const Rows& s, bool inverse, int64_t r0,
                 int64_t r1);
void rotate_rows(const double* x, double* y, const double* cos, const double* sin, const Rows& s, bool inverse,
                 int64_t r0, int64_t r1);

}  // namespace ember::rope::cpu
