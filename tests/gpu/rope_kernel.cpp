// ctest gpu.rope_kernel (label gpu): the CUDA RoPE kernel, through Rope::apply and autograd,
// against the CPU path on random inputs: forward and backward, fp64, fp32, bf16 and fp16 (rotated
// in fp32 and rounded once: each element within one rounding of the fp64 rotation, tests/unit/
// rounding_steps.h), strided, contiguous and storage-offset inputs, a dense and a stride-0
// incoming gradient, at a position offset. Exit 0 = match,
// 1 = mismatch or no CUDA kernels beside a device, 77 (ctest's skip code) = no CUDA device.
#include <torch/cuda.h>
#include <torch/torch.h>

#include <iostream>

#include "ember/model/rope.h"
#include "ember/util/error.h"
#include "kernels/rope.h"
#include "tests/gpu/gpu_precondition.h"
#include "tests/unit/rounding_steps.h"

namespace {

// Largest |gpu - cpu| over all elements relative to the norm of the element's (x_a, x_b) pair in
// the CPU result (the rotation keeps it; single elements may cancel to near 0) plus a floor.
double worst_relative(const at::Tensor& gpu, const at::Tensor& cpu, double floor) {
  auto ref = cpu.to(at::kDouble);
  const int64_t half = ref.size(-1) / 2;
  auto pair = (ref.narrow(-1, 0, half).square() + ref.narrow(-1, half, half).square()).sqrt();
  return ((gpu.cpu().to(at::kDouble) - ref).abs() / (at::cat({pair, pair}, -1) + floor)).max().item<double>();
}

enum class Layout { strided, contiguous, offset };  // a [B, T, H, d] view, a copy, a narrowed view
enum class Grad { random, ones };                   // backward of sum(y g), or of sum(y): a stride-0 grad

// y = rope(x) and dL/dx, with x [B, T, H, d_h] seen as [B, H, T, d_h] in the given layout.
std::pair<at::Tensor, at::Tensor> run(const ember::Rope& rope, const at::Tensor& x_bthd, const at::Tensor& g,
                                      Layout layout, Grad grad, int64_t offset) {
  auto x = x_bthd.detach().clone().requires_grad_(true);
  auto view = x.transpose(1, 2);
  if (layout == Layout::contiguous) view = view.contiguous();
  if (layout == Layout::offset) view = view.narrow(2, 3, 150);  // a storage offset, as Titans' narrow
  auto y = rope.apply(view, offset);
  auto loss = grad == Grad::ones ? y.sum() : (y * g.narrow(2, 0, y.size(2)).to(y.device(), y.scalar_type())).sum();
  loss.backward();
  return {y.detach(), x.grad()};
}

bool matches(at::ScalarType dtype, Layout layout, Grad grad) {
  torch::manual_seed(1);
  const int64_t offset = 5;
  ember::Rope rope(64, 256, 10000.0);
  auto x = at::randn({3, 200, 4, 64}, at::kDouble).to(dtype), g = at::randn({3, 4, 200, 64}, at::kDouble).to(dtype);
  auto [y_cpu, gx_cpu] = run(rope, x, g, layout, grad, offset);
  auto [y_gpu, gx_gpu] = run(rope, x.cuda(), g.cuda(), layout, grad, offset);
  // A projection's heads keep their [B, T, H, d_h] memory through the rotation, and so does the gradient.
  const bool dtype_ok = y_gpu.scalar_type() == dtype && gx_gpu.scalar_type() == dtype &&
                        (layout != Layout::strided || y_gpu.strides() == y_cpu.strides());
  const std::string what =
      std::string(c10::toString(dtype)) + " layout " + std::to_string(static_cast<int>(layout)) + " grad " +
      std::to_string(static_cast<int>(grad)) +
      (dtype_ok ? "" : ", WRONG DTYPE OR LAYOUT " + std::string(c10::toString(y_gpu.scalar_type())));
  if (dtype == at::kBFloat16 || dtype == at::kHalf) {
    // The GPU rotates in fp32 and rounds once: each element within one rounding of the fp64 rotation
    // of the same values (g, and so the incoming gradient, holds values of x's type).
    auto [y_ref, gx_ref] = run(rope, x.to(at::kDouble), g.to(at::kDouble), layout, grad, offset);
    const auto y = ember::testing::close_to_reference(y_gpu, y_ref, 0.0);
    const auto dx = ember::testing::close_to_reference(gx_gpu, gx_ref, 0.0);
    std::cout << what << ": y " << y.worst << "; dx " << dx.worst << "\n";
    return y.ok && dx.ok && dtype_ok;
  }
  // fp64 and fp32: the same arithmetic as the CPU's up to FMA contraction.
  const double tol = dtype == at::kDouble ? 1e-12 : 1e-5;
  const double e_y = worst_relative(y_gpu, y_cpu, 1e-6), e_g = worst_relative(gx_gpu, gx_cpu, 1e-6);
  std::cout << what << ": max rel diff y " << e_y << ", dx " << e_g << "\n";
  return e_y < tol && e_g < tol && dtype_ok;
}

bool refuses_bad_tables() {
  auto x = at::randn({1, 2, 8, 16}, at::kCUDA);
  auto ok_table = at::zeros({8, 8}, at::kCUDA);
  auto refused = [&](const at::Tensor& table, int64_t offset, at::Tensor y = {}) {
    if (!y.defined()) y = at::empty_like(x);
    try {
      ember::rope::rotate_cuda(x, y, table, table, offset, false);
    } catch (const ember::Error&) {
      return true;
    }
    return false;
  };
  const bool ok = refused(ok_table.to(at::kDouble), 0) && refused(ok_table.narrow(1, 0, 4), 0) &&
                  refused(ok_table, 1) && refused(ok_table.cpu(), 0) && !refused(ok_table, 0) &&
                  refused(ok_table, 0, at::empty_like(x, at::kDouble)) && refused(ok_table, 0, x.narrow(2, 0, 4));
  std::cout << "bad tables and outputs " << (ok ? "refused" : "NOT refused") << "\n";
  return ok;
}

}  // namespace

int main() {
  if (const int rc = gpu_precondition("gpu.rope_kernel", ember::rope::cuda_kernel_compiled(),
                                      "no CUDA kernels in this build (configure with a CUDA LibTorch and nvcc)"))
    return rc;
  if (!ember::rope::cuda_kernel_runs_on(at::Device(at::kCUDA, 0))) {
    std::cout << "FAIL: the RoPE kernel has no image for this GPU (see TORCH_CUDA_ARCH_LIST)\n";
    return 1;
  }
  bool ok = true;
  for (auto dtype : {at::kDouble, at::kFloat, at::kBFloat16, at::kHalf})
    for (auto layout : {Layout::strided, Layout::contiguous, Layout::offset})
      for (auto grad : {Grad::random, Grad::ones}) ok = matches(dtype, layout, grad) && ok;
  ok = refuses_bad_tables() && ok;
  std::cout << (ok ? "MATCH" : "MISMATCH") << "\n";
  return ok ? 0 : 1;
}
