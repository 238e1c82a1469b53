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
    throw UsageError(
        fmt::format("simulate: need k >= 2, d >= 1 and {} >= 1, got k={} d={} {}={}", what, k, d, what, iterations));
}

// Cost of a point in units of k^2 d multiply-adds, for the sweep's ETA.
double point_cost(const PackingPoint& p) {
  const double passes = p.kind == PackingKind::random ? 1.0 : 3.0;  // forward + backward for Adam
  return passes * static_cast<double>(p.iterations) * p.k * p.k * p.d;
}

uint64_t point_seed(uint64_t seed, const PackingPoint& p) {
  return seed * 1000003ULL + static_cast<uint64_t>(p.k) * 7919ULL + static_cast<uint64_t>(p.d) * 104729ULL +
         (p.kind == PackingKind::random ? 1ULL : 2ULL);
}

}  // namespace

int packing_exponent(int64_t k, int64_t d) {
  // docs/capacity.md: p = min(floor(M / ln d), 20), M = 40 if k <= 4000, 50 if d >= 3072, else 60
  const double M = k <= 4000 ? 40.0 : d >= 3072 ? 50.0 : 60.0;
  return static_cast<int>(std::min(std::floor(M / std::log(static_cast<double>(d))), 20.0));
}

double packing_learning_rate(int64_t d) { return d <= 1024 ? 0.005 : 0.0025; }  // docs/capacity.md

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

at::Tensor packing_gradient(const at::Tensor& v, int p, double* max_abs_cos) {
  const auto norms = at::linalg_vector_norm(v, 2, {0}, true).clamp_min(1e-12);
  const auto u = v / norms;  // the vectors re-normalised (docs/capacity.md: every step)
  auto off = at::mm(u.t(), u);
  off.diagonal().zero_();  // G = U^T U off its unit diagonal
  if (max_abs_cos) *max_abs_cos = off.abs().max().item<double>();
  // dL/dG = p |G|^(p-2) G for L = sum_{i != j} |G_ij|^p; |G|^(p-2) by repeated squaring of G^2
  // (a general pow per element costs several times more than a few multiplies)
  const auto sq = off * off;
  auto w = at::ones_like(off), base = sq;
  for (int n = (p - 2) / 2; n > 0; n >>= 1, base = base * base)
    if (n & 1) w.mul_(base);
  if ((p - 2) % 2) w.mul_(off.abs());
  w.mul_(off).mul_(static_cast<double>(p));
  const auto grad_u = 2.0 * at::mm(u, w);  // G symmetric: dL/dU = U (W + W^T) = 2 U W
  // Through u = v / |v| column-wise: dL/dv = (dL/du - u <u, dL/du>) / |v|
  return (grad_u - u * (u * grad_u).sum(0, true)) / norms;
}

double optimised_packing_eps(int64_t k, int64_t d, int64_t steps, at::Device device, const PackingProgress& progress) {
  check_point(k, d, steps, "steps");
  torch::NoGradGuard no_grad;  // the gradient is written by hand (packing_gradient)
  // docs/capacity.md: init N(0, 1), normalise columns (each column of the d x k matrix is a vector)
  auto v = at::randn({d, k}, at::TensorOptions().device(device));
  v = (v / at::linalg_vector_norm(v, 2, {0}, true)).requires_grad_(true);
  torch::optim::Adam adam({v}, torch::optim::AdamOptions(packing_learning_rate(d)));
  const int p = packing_exponent(k, d);
  for (int64_t step = 0; step < steps - 1; ++step) {  // as the reference: steps - 1 updates
    v.mutable_grad() = packing_gradient(v.detach(), p);
    adam.step();
    if (progress && step % 10 == 0) progress(step + 1, NAN);
  }
  double eps = 0.0;  // spec: eps* = max |G_ij| at the last step
  packing_gradient(v.detach(), p, &eps);
  if (progress) progress(steps, eps);
  return eps;
}

std::vector<PackingPoint> run_packing_sweep(const SweepOptions& o,
                                            const std::function<void(const std::vector<PackingPoint>&)>& on_point) {
  std::vector<PackingPoint> plan;
  for (PackingKind kind : {PackingKind::random, PackingKind::optimised}) {
    if ((kind == PackingKind::random && !o.random) || (kind == PackingKind::optimised && !o.optimised)) continue;
    for (int64_t d : o.ds)
      for (int64_t k : o.ks) {
        PackingPoint p;
        p.kind = kind, p.k = k, p.d = d;
        const bool random = kind == PackingKind::random;
        p.iterations = random ? o.draws : o.steps;
        if (!random) p.exponent = packing_exponent(k, d), p.lr = packing_learning_rate(d);
        check_point(k, d, p.iterations, random ? "draws" : "steps");
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
        meter.update(done + per_iteration * n,
                     fmt::format("point {}/{}: {} k={} d={}, {} {}/{}", i + 1, plan.size(), enum_name(p.kind), p.k,
                                 p.d, p.kind == PackingKind::random ? "draw" : "step", n, p.iterations));
    };
    p.eps = p.kind == PackingKind::random ? random_packing_eps(p.k, p.d, p.iterations, o.device, report)
                               : optimised_packing_eps(p.k, p.d, p.iterations, o.device, report);
    p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    done += point_cost(p);
    if (o.progress)
      log::info("simulate: point {}/{}: {} k={} d={}: eps {:.5f} ({:.1f} s)", i + 1, plan.size(), enum_name(p.kind), p.k, p.d,
                p.eps, p.seconds);
    results.push_back(p);
    if (on_point) on_point(results);
  }
  return results;
}

}  // namespace ember
