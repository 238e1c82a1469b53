// The language-model loss head alone, forward + backward of mean CE(h W^T, y) for N rows, width D
// and vocabulary V: ember's chunked linear cross-entropy against the materialised form (logits
// [N, V], then cross_entropy, as LibTorch and Python compute it by default). Prints one JSON line
// with seconds per iteration and the process's peak resident memory above the baseline after
// set-up; run each variant in its own process (bench/run_loss.sh does, ABAB).
// Usage: ember_loss_bench chunked|materialised N D V [iters] [fp32|bf16]
#include <chrono>
#include <fstream>
#include <iostream>
#include <string>

#include "ember/model/autocast.h"
#include "ember/model/linear_cross_entropy.h"
#include "peak_memory.h"

using ember::bench::reset_peak;
using ember::bench::status_kb;

int main(int argc, char** argv) {
  if (argc < 5) {
    std::cerr << "usage: ember_loss_bench chunked|materialised N D V [iters] [fp32|bf16]\n";
    return 2;
  }
  const std::string impl = argv[1];
  const int64_t N = std::stoll(argv[2]), D = std::stoll(argv[3]), V = std::stoll(argv[4]);
  const int64_t iters = argc > 5 ? std::stoll(argv[5]) : 3;
  const bool bf16 = argc > 6 && std::string(argv[6]) == "bf16";
  if (impl != "chunked" && impl != "materialised") {
    std::cerr << "ember_loss_bench: IMPL is chunked or materialised, not '" << impl << "'\n";
    return 2;
  }
  torch::manual_seed(0);
  auto h = torch::randn({N, D}).requires_grad_(), w = (0.02 * torch::randn({V, D})).requires_grad_();
  auto y = torch::randint(0, V, {N}, torch::kLong);
  auto step = [&] {
    ember::AutocastScope amp(at::kCPU, bf16);
    auto loss = impl == "chunked" ? ember::linear_cross_entropy(h, w, y)
                                  : at::cross_entropy_loss(at::linear(h, w).to(at::kFloat), y);
    loss.backward();
    h.mutable_grad() = at::Tensor();
    w.mutable_grad() = at::Tensor();
    return loss.item<double>();
  };
  step();  // warm-up
  reset_peak();
  const long base = status_kb("VmRSS");
  double loss = 0;
  auto t0 = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < iters; ++i) loss = step();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / iters;
  std::cout << "{\"impl\": \"" << impl << "\", \"N\": " << N << ", \"D\": " << D << ", \"V\": " << V
            << ", \"precision\": \"" << (bf16 ? "bf16" : "fp32") << "\", \"loss\": " << loss
            << ", \"s_per_iter\": " << s << ", \"peak_extra_mb\": " << (status_kb("VmHWM") - base) / 1024.0 << "}\n";
  return 0;
}
