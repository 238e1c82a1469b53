// CUDA check of the LEV spline kernels: the CUDA forward and backward against the CPU kernel on
// random inputs (fp32 and fp64), then the CUDA time per forward + backward. Exit 0 = match,
// 1 = mismatch, 2 = no CUDA device or no CUDA kernels in this build. Run by bench/gpu_check.sh.
#include <torch/cuda.h>

#include <chrono>
#include <iostream>

#include "kernels/lev_spline.h"
#include "kernels/lev_spline_cuda.h"

int main() {
  if (!ember::lev::cuda_kernels_compiled() || !torch::cuda::is_available()) {
    std::cout << "lev_gpu_check: no CUDA device or no CUDA kernels in this build\n";
    return 2;
  }
  bool ok = true;
  for (auto dtype : {at::kDouble, at::kFloat}) {
    torch::manual_seed(0);
    auto u = at::rand({512, 8, 128}, dtype), S = 1.0 + 0.1 * at::randn({8, 128, 16, 64}, dtype);
    auto gM = at::randn({512, 8, 64}, dtype);
    auto m_cpu = ember::lev::spline_forward_cpu(u, S, true);
    auto [gu_cpu, gs_cpu] = ember::lev::spline_backward_cpu(gM, m_cpu, u, S, true);
    auto uc = u.cuda(), Sc = S.cuda();
    auto m_gpu = ember::lev::spline_forward_cuda(uc, Sc, true);
    auto [gu_gpu, gs_gpu] = ember::lev::spline_backward_cuda(gM.cuda(), m_gpu, uc, Sc, true);
    auto rel = [](const at::Tensor& a, const at::Tensor& b) {
      return ((a.cpu() - b).abs().max() / b.abs().max().clamp_min(1e-30)).item<double>();
    };
    const double tol = dtype == at::kDouble ? 1e-10 : 1e-4;
    const double e_m = rel(m_gpu, m_cpu), e_u = rel(gu_gpu, gu_cpu), e_s = rel(gs_gpu, gs_cpu);
    std::cout << (dtype == at::kDouble ? "fp64" : "fp32") << " max rel diff: M " << e_m << ", dU " << e_u << ", dS "
              << e_s << "\n";
    ok = ok && e_m < tol && e_u < tol && e_s < tol;
  }
  auto u = at::rand({8192, 8, 128}, at::device(at::kCUDA)),
       S = 1.0 + 0.1 * at::randn({8, 128, 16, 64}, at::device(at::kCUDA));
  auto gM = at::randn({8192, 8, 64}, at::device(at::kCUDA));
  auto step = [&] {
    auto m = ember::lev::spline_forward_cuda(u, S, true);
    ember::lev::spline_backward_cuda(gM, m, u, S, true);
  };
  step();
  torch::cuda::synchronize();
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 20; ++i) step();
  torch::cuda::synchronize();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / 20;
  std::cout << "CUDA spline forward + backward, N=8192, default LEV: " << ms << " ms\n";
  std::cout << (ok ? "MATCH" : "MISMATCH") << "\n";
  return ok ? 0 : 1;
}
