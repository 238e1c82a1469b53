// ATen entry of the fused SwiGLU gate (math: kernels/swiglu_math.h): the CPU loops for CPU tensors,
// the CUDA kernel for CUDA ones. model/swiglu_gate.h makes it an autograd function.
#pragma once
#include <ATen/ATen.h>

#include <utility>

namespace ember::swiglu {

// Whether a and b [..., F] go through the fused kernels: the same shape and dtype (fp32, fp64 or
// bf16), on a CPU or on a CUDA device the kernel runs on (checked once per device, with a warning
// if not). Any strides: rows that are not evenly strided are copied first.
bool fused_supported(const at::Tensor& a, const at::Tensor& b);

// z = SiLU(a) b, contiguous, in a's dtype.
at::Tensor gate_forward(const at::Tensor& a, const at::Tensor& b);

// (dL/da, dL/db) for dz = dL/dz. `into`: a [..., 2F] buffer the two are written into as its halves
// (the gradient of a stacked projection that produced a and b); undefined: two tensors of their own.
std::pair<at::Tensor, at::Tensor> gate_backward(const at::Tensor& a, const at::Tensor& b, const at::Tensor& dz,
                                                const at::Tensor& into = {});

}  // namespace ember::swiglu
