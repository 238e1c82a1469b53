// ATen entry of the fused softmax cross-entropy over rows of logits (math: kernels/xent_rows.h):
// the CPU loops for CPU tensors, the CUDA kernel for CUDA ones. The loss head
// (model/linear_cross_entropy.h) calls it on each chunk of logits.
#pragma once
#include <ATen/ATen.h>

namespace ember::xent {

// Whether z [n, V] can go through the fused rows: fp32, fp64 or bf16 with unit stride along V, on
// a CPU, or on a CUDA device the kernel runs on (checked once per device, with a warning if not).
bool fused_supported(const at::Tensor& z);

// Returns the loss of every row [n] (fp64 for fp64 z, fp32 otherwise): CE_r = lse(s z_r) - s z_{r,y_r},
// NaN on every device for a row holding a non-finite logit (+inf, -inf or NaN). With grad, z is
// overwritten by (softmax(s z) - onehot(y)) s g', in z's dtype, where g' = g / max(counted, 1) when
// `counted` (one int64 on z's device, e.g. the rows a mean is over; read by the kernel there, so no
// host sync on a GPU) is given, else g. y [n] int64 on z's device; a row whose target is
// ignore_index counts for nothing: loss 0 and, with grad, a zero row, its logits unread. On a CPU
// any other target outside [0, V) is an error naming it and its row (checked in the loop, no pass
// of its own), on a GPU it gives its row a NaN loss.
at::Tensor softmax_xent_rows_(at::Tensor& z, const at::Tensor& y, double s, double g, bool grad,
                              int64_t ignore_index = -100, const at::Tensor& counted = {});

// x *= g in place (g a scalar tensor on x's device), unless g is exactly 1: a CPU g is read on the
// host, a CUDA one by a kernel on the device (no host sync, and no pass over x when it is 1).
void scale_unless_one_(at::Tensor& x, const at::Tensor& g);

}  // namespace ember::xent
