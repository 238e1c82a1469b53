// ctest gpu.rope_kernel (label gpu): the CUDA RoPE kernel, through Rope::apply and autograd,
// against the CPU path on random inputs: forward and backward, fp64, fp32 and bf16 (rotated in
// fp32 and rounded once), contiguous and strided inputs, at a position offset. Exit 0 = match,
// 1 = mismatch or no CUDA kernels beside a device, 77 (ctest's skip code) = no CUDA device.
#include <torch/cuda.h>
#include <torch/torch.h>

#include <iostream>

#include "ember/model/rope.h"
#include "ember/util/error.h"
#include "kernels/rope_cuda.h"

namespace {

// Largest |gpu - cpu| relative to |cpu| + floor over all elements.
double worst_relative(const at::Tensor& gpu, const at::Tensor& cpu, double floor) {
  auto ref = cpu.to(at::kDouble);
  return ((gpu.cpu().to(at::kDouble) - ref).abs() / (ref.abs() + floor)).max().item<double>();
}

// y = rope(x) and dL/dx for L = sum(y * g), with x [B, T, H, d_h] seen as [B, H, T, d_h] (strided)
// or made contiguous first.
std::pair<at::Tensor, at::Tensor> run(const ember::Rope& rope, const at::Tensor& x_bthd, const at::Tensor& g,
                                      bool strided, int64_t offset) {
  auto x = x_bthd.detach().clone().requires_grad_(true);
  auto view = x.transpose(1, 2);
  auto y = rope.apply(strided ? view : view.contiguous(), offset);
  (y * g.to(y.device(), y.scalar_type())).sum().backward();
  return {y.detach(), x.grad()};
}

bool matches(at::ScalarType dtype, bool strided) {
  torch::manual_seed(1);
  const int64_t offset = 5;
  ember::Rope rope(64, 256, 10000.0);
  auto x = at::randn({3, 200, 4, 64}, at::kDouble).to(dtype), g = at::randn({3, 4, 200, 64}, at::kDouble).to(dtype);
  auto [y_cpu, gx_cpu] = run(rope, x, g, strided, offset);
  auto [y_gpu, gx_gpu] = run(rope, x.cuda(), g.cuda(), strided, offset);
  // fp64 and fp32: the same arithmetic up to FMA contraction; bf16: the CPU rotates in fp32 and
  // keeps fp32, the GPU rounds that to bf16 once (half an ulp, 2^-9, plus a tie flipped by FMA).
  const double tol = dtype == at::kDouble ? 1e-12 : dtype == at::kFloat ? 1e-5 : 1.0 / 128;
  const double floor = dtype == at::kBFloat16 ? 1e-2 : 1e-6;
  const double e_y = worst_relative(y_gpu, y_cpu, floor), e_g = worst_relative(gx_gpu, gx_cpu, floor);
  const bool dtype_ok = y_gpu.scalar_type() == dtype && gx_gpu.scalar_type() == dtype;
  std::cout << c10::toString(dtype) << (strided ? " strided" : " contiguous") << ": max rel diff y " << e_y << ", dx "
            << e_g << (dtype_ok ? "" : ", WRONG DTYPE " + std::string(c10::toString(y_gpu.scalar_type()))) << "\n";
  return e_y < tol && e_g < tol && dtype_ok;
}

bool refuses_bad_tables() {
  auto x = at::randn({1, 2, 8, 16}, at::kCUDA);
  auto ok_table = at::zeros({8, 8}, at::kCUDA);
  auto refused = [&](const at::Tensor& table, int64_t offset) {
    try {
      ember::rope::rotate_cuda(x, table, table, offset, false);
    } catch (const ember::Error&) {
      return true;
    }
    return false;
  };
  const bool ok = refused(ok_table.to(at::kDouble), 0) && refused(ok_table.narrow(1, 0, 4), 0) &&
                  refused(ok_table, 1) && refused(ok_table.cpu(), 0) && !refused(ok_table, 0);
  std::cout << "bad tables " << (ok ? "refused" : "NOT refused") << "\n";
  return ok;
}

}  // namespace

int main() {
  if (!torch::cuda::is_available()) {
    std::cout << "gpu.rope_kernel: skipped: no CUDA device\n";
    return 77;
  }
  if (!ember::rope::cuda_kernel_compiled()) {
    std::cout << "FAIL: a CUDA device but no CUDA kernels in this build (configure with a CUDA LibTorch and nvcc)\n";
    return 1;
  }
  bool ok = true;
  for (auto dtype : {at::kDouble, at::kFloat, at::kBFloat16})
    for (bool strided : {true, false}) ok = matches(dtype, strided) && ok;
  ok = refuses_bad_tables() && ok;
  std::cout << (ok ? "MATCH" : "MISMATCH") << "\n";
  return ok ? 0 : 1;
}
