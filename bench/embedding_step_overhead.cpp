// Training-step cost of embedding kinds with the same body, measured side by side in one process:
// one model (and AdamW) per kind, the same batch, steps interleaved in ABBA order round after
// round so that machine load drifts hit every kind alike. Prints one JSON line: per kind the
// median seconds per step, and the median over rounds of each kind's step time relative to the
// first kind's in the same round, with its smallest and largest round.
// Usage: ember_embedding_step_bench V D L H D_FF B T ROUNDS [fp32|bf16] KIND [KIND...]
#include <algorithm>
#include <iostream>
#include <vector>

#include "bench_shape.h"
#include "ember/model/embedding_registry.h"
#include "ember/util/error.h"
#include "step_rounds.h"

int main(int argc, char** argv) {
  if (argc < 10) {
    std::cerr << "usage: ember_embedding_step_bench V D L H D_FF B T ROUNDS [fp32|bf16] KIND [KIND...]\n";
    return 2;
  }
  auto shape = ember::bench::parse_bench_shape(argv);
  ember::ModelConfig cfg = shape.model;
  const int64_t B = shape.batch, T = shape.seq_len, rounds = std::stoll(argv[8]);
  int first_kind = 9;
  const std::string precision =
      argv[9] == std::string("bf16") || argv[9] == std::string("fp32") ? argv[first_kind++] : "fp32";
  const bool bf16 = precision == "bf16";
  if (first_kind >= argc || rounds < 1) {
    std::cerr << "ember_embedding_step_bench: give ROUNDS >= 1 and at least one embedding KIND\n";
    return 2;
  }
  std::vector<ember::bench::Contender> all;
  for (int i = first_kind; i < argc; ++i) {
    cfg.embedding.kind = argv[i];
    try {
      ember::embedding_kind(argv[i]);
    } catch (const ember::ConfigError& e) {
      std::cerr << "ember_embedding_step_bench: " << e.what() << "\n";
      return 2;
    }
    torch::manual_seed(0);  // the same body initialisation for every kind
    all.push_back(ember::bench::make_contender(argv[i], cfg));
  }
  auto batch = torch::randint(0, cfg.vocab_size, {B, T + 1}, torch::kLong);
  auto x = batch.narrow(1, 0, T), y = batch.narrow(1, 1, T);
  ember::bench::run_rounds(all, x, y, bf16, rounds);
  std::cout << "{\"precision\": \"" << precision << "\", \"tokens_per_step\": " << B * T
            << ", \"unique_ids\": " << std::get<0>(at::_unique(x)).numel() << ", \"rounds\": " << rounds
            << ", \"threads\": " << at::get_num_threads() << ", \"kinds\": [";
  for (size_t i = 0; i < all.size(); ++i)
    std::cout << (i ? ", " : "") << "{\"kind\": \"" << all[i].name
              << "\", \"params\": " << all[i].model->num_parameters()
              << ", \"median_s_per_step\": " << ember::bench::median(all[i].seconds)
              << ", \"median_relative_to_first\": " << ember::bench::median(all[i].relative)
              << ", \"min_relative_to_first\": " << *std::min_element(all[i].relative.begin(), all[i].relative.end())
              << ", \"max_relative_to_first\": " << *std::max_element(all[i].relative.begin(), all[i].relative.end())
              << "}";
  std::cout << "]}\n";
  return 0;
}
