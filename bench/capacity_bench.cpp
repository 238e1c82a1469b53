// Speed of the exact epsilon pass (docs/capacity.md) on a synthetic V x d matrix: prints one JSON
// line with the time, the matmul rate, and the time extrapolated to 128,256 x 4096 (Llama 3).
// Usage: ember_capacity_bench V D [exact|moments|sampled|gram] [block]
// ("gram" times the block matrix products alone, to separate them from the reduction.)
#include <torch/torch.h>

#include <chrono>
#include <iostream>

#include "ember/analysis/epsilon.h"
#include "ember/analysis/gram_blocks.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: ember_capacity_bench V D [exact|moments|sampled] [block]\n";
    return 2;
  }
  const int64_t V = std::stoll(argv[1]), d = std::stoll(argv[2]);
  const std::string method = argc > 3 ? argv[3] : "exact";
  ember::EpsilonOptions o;
  o.method = method == "moments"   ? ember::EpsilonMethod::moments
             : method == "sampled" ? ember::EpsilonMethod::sampled
                                   : ember::EpsilonMethod::exact;
  if (argc > 4) o.block = std::stoll(argv[4]);
  o.progress_label = "bench";
  torch::manual_seed(0);
  const auto matrix = torch::randn({V, d}) + 0.05;  // a small common direction, like trained tables
  const auto t0 = std::chrono::steady_clock::now();
  const auto rows = ember::unit_rows(matrix, "bench");
  ember::EpsilonEstimate e;
  if (method == "gram")
    ember::for_each_gram_block(rows.rows, o.block, [](const ember::GramBlock&) {});
  else
    e = ember::estimate_epsilon(rows, o);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // FLOPs: the exact pass needs the V(V-1)/2 pairs' dot products, ~V^2 d (the diagonal blocks
  // compute both triangles, a little more); the Gram identity's X^T X costs 2 V d^2.
  const bool pairwise = method == "exact" || method == "gram";
  const double vd = static_cast<double>(V) * d, big_v = 128256.0, big_d = 4096.0;
  const double flops = pairwise ? vd * V : 2.0 * vd * d;
  const double big_flops = pairwise ? big_v * big_v * big_d : 2.0 * big_v * big_d * big_d;
  std::cout << "{\"V\": " << V << ", \"d\": " << d << ", \"method\": \"" << method << "\", \"block\": " << o.block
            << ", \"threads\": " << at::get_num_threads() << ", \"seconds\": " << s
            << ", \"pass_seconds\": " << e.seconds << ", \"gflops\": " << flops / s / 1e9 << ", \"mu\": " << e.mu
            << ", \"sigma\": " << e.sigma << ", \"epsilon\": " << e.epsilon()
            << ", \"extrapolated_128256x4096_s\": " << s * big_flops / flops << "}\n";
  return 0;
}
