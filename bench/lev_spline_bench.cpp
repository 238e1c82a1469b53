// LEV generator cost for one batch of token ids: forward + backward of the embedding, with the
// fused kernels or the ATen reference. Prints one JSON line with the time per iteration and the
// process's peak resident memory above the baseline after set-up (run each impl in its own
// process; bench/run_lev.sh does). Usage: ember_lev_bench fused|reference [N] [V] [D] [iters]
#include <chrono>
#include <fstream>
#include <iostream>
#include <string>

#include "ember/model/lev.h"
#include "peak_memory.h"

using ember::bench::reset_peak;
using ember::bench::status_kb;

int main(int argc, char** argv) {
  const std::string impl = argc > 1 ? argv[1] : "fused";
  const int64_t N = argc > 2 ? std::stoll(argv[2]) : 8192, V = argc > 3 ? std::stoll(argv[3]) : 50257,
                D = argc > 4 ? std::stoll(argv[4]) : 768, iters = argc > 5 ? std::stoll(argv[5]) : 3;
  torch::manual_seed(0);
  ember::LevConfig cfg;
  if (!ember::enum_from_name(impl, cfg.impl)) {
    std::cerr << "ember_lev_spline_bench: IMPL is fused or reference, not '" << impl << "'\n";
    return 2;
  }
  ember::LevEmbedding lev(V, D, cfg);
  auto ids = torch::randint(0, V, {N}, torch::kLong);
  auto w = torch::randn({N, D});
  auto step = [&] {
    (lev.forward(ids) * w).sum().backward();
    for (auto& p : lev.parameters()) p.mutable_grad() = at::Tensor();
  };
  step();  // warm-up
  reset_peak();
  const long base = status_kb("VmRSS");
  auto t0 = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < iters; ++i) step();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / iters;
  const long peak = status_kb("VmHWM");
  std::cout << "{\"impl\": \"" << impl << "\", \"tokens\": " << N
            << ", \"unique\": " << std::get<0>(at::_unique(ids)).numel() << ", \"V\": " << V << ", \"D\": " << D
            << ", \"s_per_iter\": " << s << ", \"peak_extra_mb\": " << (peak - base) / 1024.0 << "}\n";
  return 0;
}
