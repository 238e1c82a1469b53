// ctest gpu.swiglu_gate (label gpu): the CUDA SwiGLU gate kernels (kernels/swiglu_cuda.cu) through
// the autograd function (kernels/swiglu.h) against the CPU loops, which the unit tests hold to
// ATen: z and both gradients in fp64 (round-off) and fp32 (its rounding), and bf16 element by
// element within one rounding of the fp64 values (tests/unit/rounding_steps.h), for
// the halves of one stacked tensor, separate operands and rows that are not evenly strided; and a
// model on the GPU with the gate fused against ATen's silu * up, loss and every gradient.
// Exit 0 = match, 1 = mismatch or no kernel beside a device, 77 (ctest's skip code) = no CUDA device.
#include <torch/torch.h>

#include <iostream>

#include "kernels/swiglu.h"
#include "tests/gpu/fusion_model_check.h"
#include "tests/gpu/gpu_precondition.h"
#include "tests/unit/rounding_steps.h"

namespace {

enum class Layout { halves, separate, strided };

// z and the gradient of sum(z * probe) w.r.t. the [rows..., 2F] leaf the operands come from (on the
// CPU, in their type).
std::pair<at::Tensor, at::Tensor> run(const at::Tensor& ab, const at::Tensor& probe, Layout layout) {
  const int64_t F = ab.size(-1) / 2;
  auto leaf = ab.detach().clone().requires_grad_(true);
  at::Tensor a = leaf.narrow(-1, 0, F), b = leaf.narrow(-1, F, F), p = probe;
  if (layout == Layout::separate) a = a.contiguous(), b = b.contiguous();
  if (layout == Layout::strided) a = a.transpose(0, 1), b = b.transpose(0, 1), p = p.transpose(0, 1);
  auto z = ember::swiglu::gate(a, b);
  (z.to(at::kDouble) * p.to(z.device())).sum().backward();
  return {(layout == Layout::strided ? z.transpose(0, 1) : z).detach().cpu(), leaf.grad().cpu()};
}

bool kernels_match() {
  torch::manual_seed(1);
  const auto ab64 = 3 * torch::randn({4, 300, 2 * 344}, torch::kDouble);
  // bf16 values, so that a bf16 z's gradient (the probe in bf16) is the fp64 reference's exactly
  const auto probe = torch::randn({4, 300, 344}).to(at::kBFloat16).to(at::kDouble);
  bool ok = true;
  for (const auto dtype : {at::kDouble, at::kFloat, at::kBFloat16}) {
    // fp64, fp32: against the CPU loops, relative to the largest value; bf16: each element within one
    // rounding of the CPU loops' fp64 result on the same values.
    const double tol = dtype == at::kDouble ? 1e-12 : 1e-5;
    for (const auto layout : {Layout::halves, Layout::separate, Layout::strided}) {
      const auto ab = ab64.to(dtype);
      const auto [z_ref, g_ref] = run(dtype == at::kBFloat16 ? ab.to(at::kDouble) : ab, probe, layout);
      const auto [z_gpu, g_gpu] = run(ab.cuda(), probe, layout);
      const auto z = ember::testing::close_to_reference(z_gpu, z_ref, tol);
      const auto g = ember::testing::close_to_reference(g_gpu, g_ref, tol);
      std::cout << c10::toString(dtype) << " layout " << static_cast<int>(layout) << ": z " << z.worst << "; gradient "
                << g.worst << "\n";
      ok = ok && z.ok && g.ok;
    }
  }
  return ok;
}

}  // namespace

int main() {
  if (int code = gpu_precondition("gpu.swiglu_gate")) return code;
  if (!ember::swiglu::fused_supported(torch::ones({2, 2}).cuda(), torch::ones({2, 2}).cuda())) {
    std::cout << "FAIL: gpu.swiglu_gate: a CUDA device but no SwiGLU kernel for it in this build\n";
    return 1;
  }
  const bool ok = kernels_match() && fused_model_matches("fused gate", ember::kernels::Op::swiglu);
  std::cout << (ok ? "OK" : "FAIL") << "\n";
  return ok ? 0 : 1;
}
