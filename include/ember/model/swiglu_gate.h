// SwiGLU's gate z = SiLU(a) * b (docs/mixers.md, the chassis) as one fused kernel forward and one
// backward (kernels/swiglu.h), in place of ATen's silu, mul and their backward. Backward keeps a and
// b (kept anyway as the projections' outputs), not SiLU(a): d_ff fewer values per token and layer.
// When a and b are the two halves of one stacked projection (model/fused_projections.h), their
// gradients are written as the halves of one buffer, which the projection's backward then reads as
// it is instead of copying the two together.
//
// Used wherever the kernels apply (fp32, fp64 and bf16 on a CPU or on a GPU the kernel runs on; ATen's
// ops elsewhere) unless kernels.swiglu says aten (ember/kernels/kernel_choice.h).
#pragma once
#include <ATen/ATen.h>

namespace ember {

at::Tensor swiglu_gate(const at::Tensor& a, const at::Tensor& b);

}  // namespace ember
