// The Titans memory scan: the exact chunk-parallel algorithm (memory_scan) against the
// token-by-token loop (memory_scan_reference) on the same inputs, forward only, timed in ABAB
// rounds. Prints one JSON line with the median seconds of each, their ratio per round (median and
// range) and the largest output difference. Target: chunked at least 5x faster at
// T = 1024, C = 16.
// Denormals are flushed to zero on every thread, as `ember train` does on CPUs (util/denormals.h): the
// memory decays towards zero over the sequence and its products would otherwise be denormal;
// EMBER_DENORMALS=keep measures without. "state_max_abs" is the largest end-state weight.
// Usage: ember_titans_scan_bench [B H T D_HEAD EXPANSION CHUNK ROUNDS]   (default 1 4 1024 32 4 16 5)
#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "ember/model/mixers/titans/neural_memory.h"
#include "ember/util/denormals.h"
#include "step_rounds.h"

namespace {

double seconds(auto&& fn) {
  const auto t0 = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  int64_t a[7] = {1, 4, 1024, 32, 4, 16, 5};
  for (int i = 1; i < argc && i <= 7; ++i) a[i - 1] = std::stoll(argv[i]);
  const int64_t B = a[0], H = a[1], T = a[2], D = a[3], M = a[3] * a[4], C = a[5], rounds = a[6];
  const char* keep = std::getenv("EMBER_DENORMALS");
  const bool flush = !(keep && std::string(keep) == "keep") && ember::flush_denormals_on_all_threads();
  at::manual_seed(0);
  auto unit = [](const at::Tensor& x) { return x / x.norm(2, -1, true); };
  const ember::MemoryInputs in{unit(at::randn({B, H, T, D})), unit(at::randn({B, H, T, D})),
                               at::randn({B, H, T, D}),       at::rand({B, H, T}) * 0.1,
                               at::rand({B, H, T}) * 0.6 + 0.3, at::rand({B, H, T}) * 0.1};
  const ember::MemoryState start{at::randn({B, H, D, M}) * 0.1, at::randn({B, H, M, D}) * 0.1,
                                 at::zeros({B, H, D, M}), at::zeros({B, H, M, D})};
  auto run = [&](bool chunked) {
    ember::MemoryState s{start.w1.clone(), start.w2.clone(), start.s1.clone(), start.s2.clone()};
    return chunked ? ember::memory_scan(s, in, {C, ember::Retrieval::after})
                   : ember::memory_scan_reference(s, in, {C, ember::Retrieval::after});
  };
  const double diff = (run(true) - run(false)).abs().max().item<double>();  // also the warm-up
  ember::MemoryState end{start.w1.clone(), start.w2.clone(), start.s1.clone(), start.s2.clone()};
  ember::memory_scan(end, in, {C, ember::Retrieval::after});
  const double state_max = std::max(end.w1.abs().max().item<double>(), end.w2.abs().max().item<double>());
  std::vector<double> chunked, loop, ratio;
  for (int64_t r = 0; r < rounds; ++r) {
    const bool chunked_first = r % 2 == 0;
    double tc = 0, tl = 0;
    if (chunked_first) tc = seconds([&] { run(true); });
    tl = seconds([&] { run(false); });
    if (!chunked_first) tc = seconds([&] { run(true); });
    chunked.push_back(tc), loop.push_back(tl), ratio.push_back(tl / tc);
  }
  std::cout << "{\"B\": " << B << ", \"H\": " << H << ", \"T\": " << T << ", \"d_head\": " << D << ", \"hidden\": " << M
            << ", \"chunk\": " << C << ", \"rounds\": " << rounds << ", \"threads\": " << at::get_num_threads()
            << ", \"chunked_s\": " << ember::bench::median(chunked) << ", \"loop_s\": " << ember::bench::median(loop)
            << ", \"speedup_median\": " << ember::bench::median(ratio) << ", \"speedup_min\": " << *std::min_element(ratio.begin(), ratio.end())
            << ", \"speedup_max\": " << *std::max_element(ratio.begin(), ratio.end()) << ", \"max_abs_diff\": " << diff
            << ", \"flush_denormals\": " << (flush ? "true" : "false") << ", \"state_max_abs\": " << state_max << "}\n";
  return 0;
}
