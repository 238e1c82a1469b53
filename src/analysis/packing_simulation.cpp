#include "ember/analysis/packing_simulation.h"

#include <torch/optim/adam.h>
#include <torch/utils.h>

#include <chrono>
#include <cmath>

#include "ember/analysis/gram_blocks.h"
#include "ember/util/error.h"
#include "ember/util/log.h"
#include "ember/util/progress.h"

namespace ember {
namespace {

void check_point(int64_t k, int64_t d, int64_t iterations, const char* what) {
  if (k < 2 || d < 1 || iterations < 1)
    throw UsageError(fmt::format("simulate: need k >= 2, d >= 1 and {} >= 1, got k={} d={} {}={}", what, k, d,
                                 what, iterations));
}

// Cost of a point in units of k^2 d multiply-adds, for the sweep's ETA.
double point_cost(const PackingPoint& p) {
  const double passes = p.kind == "random" ? 1.0 : 3.0;  // forward + backward for Adam
  return passes * static_cast<double>(p.iterations) * p.k * p.k * p.d;
}

uint64_t point_seed(uint64_t seed, const PackingPoint& p) {
  return seed * 1000003ULL + static_cast<uint64_t>(p.k) * 7919ULL + static_cast<uint64_t>(p.d) * 104729ULL +
         (p.kind == "random" ? 1ULL : 2ULL);
}

}  // namespace

int packing_exponent(int64_t k, int64_t d) {
  // spec/capacity.md: p = min(floor(M / ln d), 20), M = 40 if k <= 4000, 50 if d >= 3072, else 60
  const double M = k <= 4000 ? 40.0 : d >= 3072 ? 50.0 : 60.0;
  return static_cast<int>(std::min(std::floor(M / std::log(static_cast<double>(d))), 20.0));
}

double packing_learning_rate(int64_t d) { return d <= 1024 ? 0.005 : 0.0025; }  // spec/capacity.md

double max_abs_cosine(const at::Tensor& rows, int64_t block) {
  double best = 0.0;
  for_each_gram_block(rows, block, [&](const GramBlock& b) {
    const auto g = b.diagonal ? b.values.triu(1) : b.values;  // i != j: off the diagonal only
    best = std::max(best, g.abs().max().item<double>());
  });
  return best;
}

double random_packing_eps(int64_t k, int64_t d, int64_t draws, at::Device device, const PackingProgress& progress) {
  check_point(k, d, draws, "draws");
  torch::NoGradGuard no_grad;
  double best = 1.0;
  for (int64_t t = 0; t < draws; ++t) {
    auto x = at::randn({k, d}, at::TensorOptions().device(device));
    x = x / at::linalg_vector_norm(x, 2, {1}, true);
    best = std::min(best, max_abs_cosine(x));  // spec: min over draws of max_{i != j} |cos|
    if (progress) progress(t + 1, best);
  }
  return best;
}

double optimised_packing_eps(int64_t k, int64_t d, int64_t steps, at::Device device, const PackingProgress& progress) {
  check_point(k, d, steps, "steps");
  const auto opts = at::TensorOptions().device(device);
  // spec/capacity.md: init N(0, 1), normalise columns (each column of the d x k matrix is a vector)
  auto v = at::randn({d, k}, opts);
  v = (v / at::linalg_vector_norm(v, 2, {0}, true)).requires_grad_(true);
  torch::optim::Adam adam({v}, torch::optim::AdamOptions(packing_learning_rate(d)));
  const int p = packing_exponent(k, d);
  const auto eye = at::eye(k, opts);
  for (int64_t step = 0;; ++step) {
    adam.zero_grad();
    const auto unit = v / at::linalg_vector_norm(v, 2, {0}, true).clamp_min(1e-12);  // re-normalise each step
    const auto off = at::mm(unit.t(), unit) - eye;  // G = V^T V without its unit diagonal
    if (step == steps - 1) {  // spec: eps* = max |G_ij| at the last step
      const double eps = off.detach().abs().max().item<double>();
      if (progress) progress(steps, eps);
      return eps;
    }
    const auto loss = off.abs().pow(p).sum();  // sum_{i != j} |G_ij|^p
    loss.backward();
    adam.step();
    if (progress && step % 10 == 0) progress(step + 1, NAN);
  }
}

std::vector<PackingPoint> run_packing_sweep(const SweepOptions& o,
                                            const std::function<void(const std::vector<PackingPoint>&)>& on_point) {
  std::vector<PackingPoint> plan;
  for (const char* kind : {"random", "optimised"}) {
    if ((std::string(kind) == "random" && !o.random) || (std::string(kind) == "optimised" && !o.optimised)) continue;
    for (int64_t d : o.ds)
      for (int64_t k : o.ks) {
        PackingPoint p;
        p.kind = kind, p.k = k, p.d = d;
        p.iterations = p.kind == "random" ? o.draws : o.steps;
        if (p.kind == "optimised") p.exponent = packing_exponent(k, d), p.lr = packing_learning_rate(d);
        check_point(k, d, p.iterations, p.kind == "random" ? "draws" : "steps");
        plan.push_back(p);
      }
  }
  double total = 0.0, done = 0.0;
  for (const auto& p : plan) total += point_cost(p);
  ProgressMeter meter("simulate", total);
  std::vector<PackingPoint> results;
  for (size_t i = 0; i < plan.size(); ++i) {
    PackingPoint p = plan[i];
    torch::manual_seed(point_seed(o.seed, p));
    const auto t0 = std::chrono::steady_clock::now();
    const double per_iteration = point_cost(p) / p.iterations;
    auto report = [&](int64_t n, double) {
      if (o.progress)
        meter.update(done + per_iteration * n, fmt::format("point {}/{}: {} k={} d={}, {} {}/{}", i + 1, plan.size(),
                                                           p.kind, p.k, p.d, p.kind == "random" ? "draw" : "step",
                                                           n, p.iterations));
    };
    p.eps = p.kind == "random" ? random_packing_eps(p.k, p.d, p.iterations, o.device, report)
                               : optimised_packing_eps(p.k, p.d, p.iterations, o.device, report);
    p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    done += point_cost(p);
    if (o.progress)
      log::info("simulate: point {}/{}: {} k={} d={}: eps {:.5f} ({:.1f} s)", i + 1, plan.size(), p.kind, p.k, p.d,
                p.eps, p.seconds);
    results.push_back(p);
    if (on_point) on_point(results);
  }
  return results;
}

}  // namespace ember
