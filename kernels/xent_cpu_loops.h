// Inner loop of the fused CPU softmax cross-entropy (no ATen; math in kernels/xent_rows.h) over a
// range of rows of logits z [rows, V] (row stride ld, unit stride along V). The caller splits rows
// across threads. Built with -O3 and cloned for AVX2+FMA and AVX-512.
#pragma once
#include <cstdint>

#include "kernels/xent_rows.h"

namespace ember::xent::cpu {

// loss[r] = CE of row r at scale s (NaN when the row holds a non-finite logit); with grad, row r
// of z becomes (softmax(s z) - onehot(y)) s g. A row whose target is `ignore` gets loss 0 and, with
// grad, zeros. One read of the row for its maximum, one for its sum of exponentials (with grad:
// writing them over the row), one read-write for the gradient (the row stays in cache between
// them). Returns the first row in [r0, r1) whose target is outside [0, V) and not `ignore`, which
// is left alone, or -1.
int64_t rows(float* z, int64_t V, int64_t ld, const int64_t* y, int64_t ignore, float s, float g, bool grad,
             float* loss, int64_t r0, int64_t r1);
int64_t rows(Bf16* z, int64_t V, int64_t ld, const int64_t* y, int64_t ignore, float s, float g, bool grad, float* loss,
             int64_t r0, int64_t r1);
int64_t rows(double* z, int64_t V, int64_t ld, const int64_t* y, int64_t ignore, double s, double g, bool grad,
             double* loss, int64_t r0, int64_t r1);

}  // namespace ember::xent::cpu
