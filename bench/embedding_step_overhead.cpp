// Training-step cost of embedding kinds with the same body, measured side by side in one process:
// one model (and AdamW) per kind, the same batch, steps interleaved in ABBA order round after
// round so that machine load drifts hit every kind alike. Prints one JSON line: per kind the
// median seconds per step, and the median over rounds of each kind's step time relative to the
// first kind's in the same round.
// Usage: ember_embedding_step_bench V D L H D_FF B T ROUNDS [fp32|bf16] KIND [KIND...]
#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>
#include <vector>

#include "bench_shape.h"
#include "ember/model/autocast.h"
#include "ember/model/embedding.h"
#include "ember/model/lm.h"
#include "ember/train/adamw.h"
#include "ember/util/error.h"

namespace {

struct Contender {
  std::string kind;
  std::unique_ptr<ember::LanguageModel> model;
  std::unique_ptr<ember::AdamW> opt;
  std::vector<double> seconds;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double timed_step(Contender& c, const at::Tensor& x, const at::Tensor& y, bool bf16) {
  const auto t0 = std::chrono::steady_clock::now();
  {
    ember::AutocastScope autocast(at::kCPU, bf16);
    c.model->loss(x, y).backward();
  }
  ember::clip_grad_norm(c.model->parameters(), 1.0);
  c.opt->step(1e-4);
  c.opt->zero_grad();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

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
  std::vector<Contender> all;
  for (int i = first_kind; i < argc; ++i) {
    cfg.embedding.kind = argv[i];
    try {
      ember::embedding_kind(argv[i]);
    } catch (const ember::ConfigError& e) {
      std::cerr << "ember_embedding_step_bench: " << e.what() << "\n";
      return 2;
    }
    torch::manual_seed(0);  // the same body initialisation for every kind
    auto model = std::make_unique<ember::LanguageModel>(cfg);
    auto opt = std::make_unique<ember::AdamW>(model->named_parameters().pairs(), ember::OptimConfig{});
    all.push_back({argv[i], std::move(model), std::move(opt), {}});
  }
  auto batch = torch::randint(0, cfg.vocab_size, {B, T + 1}, torch::kLong);
  auto x = batch.narrow(1, 0, T), y = batch.narrow(1, 1, T);
  for (auto& c : all) timed_step(c, x, y, bf16), timed_step(c, x, y, bf16);  // warm-up
  std::vector<std::vector<double>> relative(all.size());
  for (int64_t r = 0; r < rounds; ++r) {
    std::vector<double> t(all.size());
    for (size_t k = 0; k < all.size(); ++k) {  // ABBA: even rounds forward, odd rounds backward
      const size_t i = r % 2 ? all.size() - 1 - k : k;
      t[i] = timed_step(all[i], x, y, bf16);
      all[i].seconds.push_back(t[i]);
    }
    for (size_t i = 0; i < all.size(); ++i) relative[i].push_back(t[i] / t[0]);
  }
  std::cout << "{\"precision\": \"" << precision << "\", \"tokens_per_step\": " << B * T
            << ", \"unique_ids\": " << std::get<0>(at::_unique(x)).numel() << ", \"rounds\": " << rounds
            << ", \"threads\": " << at::get_num_threads() << ", \"kinds\": [";
  for (size_t i = 0; i < all.size(); ++i)
    std::cout << (i ? ", " : "") << "{\"kind\": \"" << all[i].kind
              << "\", \"params\": " << all[i].model->num_parameters()
              << ", \"median_s_per_step\": " << median(all[i].seconds)
              << ", \"median_relative_to_first\": " << median(relative[i]) << "}";
  std::cout << "]}\n";
  return 0;
}
