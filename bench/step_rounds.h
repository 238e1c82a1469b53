// Training steps of several models timed side by side in one process: one model (and AdamW) per
// contender, the same batch, steps interleaved in ABBA order round after round so that machine load
// drifts hit every contender alike. Shared by the embedding and mixer step benchmarks.
#pragma once
#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "ember/model/autocast.h"
#include "ember/model/lm.h"
#include "ember/train/adamw.h"

namespace ember::bench {

struct Contender {
  std::string name;
  std::unique_ptr<LanguageModel> model;
  std::unique_ptr<AdamW> opt;
  std::vector<double> seconds;   // per timed step
  std::vector<double> relative;  // step time / the first contender's in the same round
};

inline Contender make_contender(const std::string& name, const ModelConfig& cfg) {
  auto model = std::make_unique<LanguageModel>(cfg);
  auto opt = std::make_unique<AdamW>(model->named_parameters().pairs(), OptimConfig{});
  return {name, std::move(model), std::move(opt), {}, {}};
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// One training step (forward, backward, clipping, AdamW); its seconds.
inline double timed_step(Contender& c, const at::Tensor& x, const at::Tensor& y, bool bf16) {
  const auto t0 = std::chrono::steady_clock::now();
  {
    AutocastScope autocast(at::kCPU, bf16);
    c.model->loss(x, y).backward();
  }
  clip_grad_norm(c.model->parameters(), 1.0);
  c.opt->step(1e-4);
  c.opt->zero_grad();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Two warm-up steps each, then `rounds` rounds of one step per contender, ABBA order.
inline void run_rounds(std::vector<Contender>& all, const at::Tensor& x, const at::Tensor& y, bool bf16,
                       int64_t rounds) {
  for (auto& c : all) timed_step(c, x, y, bf16), timed_step(c, x, y, bf16);
  for (int64_t r = 0; r < rounds; ++r) {
    std::vector<double> t(all.size());
    for (size_t k = 0; k < all.size(); ++k) {  // even rounds forward, odd rounds backward
      const size_t i = r % 2 ? all.size() - 1 - k : k;
      t[i] = timed_step(all[i], x, y, bf16);
      all[i].seconds.push_back(t[i]);
    }
    for (size_t i = 0; i < all.size(); ++i) all[i].relative.push_back(t[i] / t[0]);
  }
}

}  // namespace ember::bench
