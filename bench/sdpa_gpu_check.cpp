// Which scaled-dot-product-attention kernel CUDA runs for the big configs' attention under bf16
// autocast (q, k, v reach SDPA in fp32 from RoPE and autocast casts them to bf16), and its time for
// forward + backward. 0 = math (the slow O(T^2)-memory fallback), 1 = flash, 2 = memory-efficient,
// 3 = cuDNN. Exit 2 = no CUDA device (the choice for a small CPU shape is printed). Run by
// bench/gpu_check.sh.
#include <ATen/SDPBackend.h>
#include <torch/cuda.h>
#include <torch/torch.h>

#include <chrono>
#include <iostream>

#include "ember/model/autocast.h"

namespace {

const char* backend_name(int64_t choice) {
  switch (static_cast<at::SDPBackend>(choice)) {
    case at::SDPBackend::math: return "math";
    case at::SDPBackend::flash_attention: return "flash";
    case at::SDPBackend::efficient_attention: return "memory-efficient";
    case at::SDPBackend::cudnn_attention: return "cuDNN";
    default: return "other";
  }
}

// q, k, v [B, H, T, d] as the attention mixer hands them over (fp32, v a transposed view).
void report(const char* name, int64_t B, int64_t H, int64_t T, int64_t d, at::Device device) {
  const auto f32 = at::device(device).dtype(at::kFloat);
  auto q = at::randn({B, H, T, d}, f32), k = at::randn({B, H, T, d}, f32);
  auto v = at::randn({B, T, H, d}, f32).transpose(1, 2);
  const auto bf = [](const at::Tensor& t) { return t.to(at::kBFloat16); };
  const int64_t choice = at::_fused_sdp_choice(bf(q), bf(k), bf(v), {}, 0.0, true);
  std::cout << "sdpa " << name << " (B " << B << ", H " << H << ", T " << T << ", d " << d
            << ", bf16, causal): " << backend_name(choice) << " (" << choice << ")";
  if (!device.is_cuda()) return void(std::cout << "\n");
  q.requires_grad_(), k.requires_grad_();
  auto step = [&] {
    ember::AutocastScope amp(device, true);
    auto o = at::scaled_dot_product_attention(q, k, v, {}, 0.0, true);
    o.sum().backward();
  };
  step();
  torch::cuda::synchronize();
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 10; ++i) step();
  torch::cuda::synchronize();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / 10;
  const double flops = 3.5 * 4.0 * B * H * T * T * d / 2;  // causal fwd (4BHT^2d / 2) + bwd (2.5x fwd)
  std::cout << " | forward + backward " << ms << " ms, " << flops / ms / 1e9 << " TFLOP/s\n";
}

}  // namespace

int main() {
  if (!torch::cuda::is_available()) {
    report("small, CPU", 1, 2, 64, 32, at::kCPU);
    std::cout << "sdpa_gpu_check: no CUDA device\n";
    return 2;
  }
  report("tapered 1.3b", 4, 16, 4096, 128, at::Device(at::kCUDA, 0));
  report("leviathan 1.2b", 8, 16, 2048, 128, at::Device(at::kCUDA, 0));
  return 0;
}
