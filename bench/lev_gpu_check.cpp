// CUDA time per LEV spline forward + backward (N = 8192 tokens, the default LEV shape). Exit 2 =
// no CUDA device or no CUDA kernels in this build. Run by bench/gpu_check.sh after the gpu tests
// (tests/gpu/lev_kernels.cpp compares the CUDA kernels with the CPU ones).
#include <torch/cuda.h>

#include <chrono>
#include <iostream>

#include "kernels/lev_spline.h"

int main() {
  if (!ember::lev::cuda_kernels_compiled() || !torch::cuda::is_available()) {
    std::cout << "lev_gpu_check: no CUDA device or no CUDA kernels in this build\n";
    return 2;
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
  return 0;
}
