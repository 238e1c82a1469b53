// RMSNorm with the residual add before it, as the model calls it (docs/mixers.md, the chassis;
// math: kernels/rms_norm_math.h), with its autograd: one fused pass forward and one backward, the
// CPU loops (kernels/rms_norm_cpu_loops.h) for CPU tensors and the CUDA kernels
// (kernels/rms_norm_cuda.cu) for CUDA ones, wherever they take the input and kernels.norm allows
// (ember/kernels/kernel_choice.h); ATen's rms_norm (and an add) elsewhere.
#pragma once
#include <ATen/ATen.h>

#include <utility>

namespace ember::rms_norm {

// y = RMSNorm(x) g. Fused: backward reads x, g and 1/rms per row (saved), not y.
at::Tensor norm(const at::Tensor& x, const at::Tensor& g, double eps);

// {h, y} = {x + m, RMSNorm(h) g} from one read of x and m, y in y_type (x's, or bf16 under
// autocast for a reader that would cast it anyway). Fused, backward adds the gradient reaching h
// along the stream into the norm's: dx, and dm in m's type.
std::pair<at::Tensor, at::Tensor> add_norm(const at::Tensor& x, const at::Tensor& m, const at::Tensor& g, double eps,
                                           at::ScalarType y_type);

// Bytes per row of `width` that norm and add_norm keep for backward, the stream in `x_elem`-byte
// elements: h (x without m) and 1/rms, saved by the fused pass (g is a parameter); `fused`: false
// for ATen's rms_norm (kernels.norm = aten), which keeps x, 1/rms and the normalised x. The memory
// estimate sums this; tests/unit/test_saved_bytes.cpp measures it.
int64_t saved_bytes_per_row(int64_t width, int64_t x_elem, bool fused);

// The passes under the autograd functions (tests call them directly).

// Whether the fused pass takes the stream x [..., D] (fp32 or fp64), the block output m (undefined,
// or x's shape in x's type or bf16), the gain g [D] in x's type and an output `y_type` (x's or bf16;
// bf16 needs an fp32 stream), on a CPU or on a CUDA device the kernel runs on (checked once per
// device, with a warning if not); rows of any width D.
bool fused_supported(const at::Tensor& x, const at::Tensor& m, const at::Tensor& g, at::ScalarType y_type);

struct Forward {
  at::Tensor h;  // x + m (undefined without m)
  at::Tensor y;  // RMSNorm(h) g, in y_type
  at::Tensor r;  // 1 / rms per row, in x's type: what backward needs beside h and g
};
Forward forward(const at::Tensor& x, const at::Tensor& m, const at::Tensor& g, double eps, at::ScalarType y_type);

struct Backward {
  at::Tensor dx;  // the gradient of x, and of m when m has x's type
  at::Tensor dm;  // of m when m is bf16 (undefined otherwise)
  at::Tensor dg;
};
// From dy (y's type) and dh (the gradient along the stream; may be undefined), with h (x without m),
// g and r of the forward; m_type: m's type, or x's when there was no m.
Backward backward(const at::Tensor& dh, const at::Tensor& dy, const at::Tensor& h, const at::Tensor& g,
                  const at::Tensor& r, at::ScalarType m_type);

}  // namespace ember::rms_norm
