#include "ember/train/peak_flops.h"

#include <algorithm>
#include <chrono>

namespace ember {
namespace {

struct SquareProduct {
  at::Tensor a, b, c;
  int64_t n;
  SquareProduct(int64_t size, const at::TensorOptions& opts)
      : a(at::randn({size, size}, opts)), b(at::randn({size, size}, opts)), c(at::empty({size, size}, opts)), n(size) {}
  double flops() const { return 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n); }
  double seconds(int iters) {  // wall time of `iters` products, a GPU's included (the sum waits for it)
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) at::mm_out(c, a, b);
    (void)c.sum().item<float>();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
};

}  // namespace

double measure_matmul_peak(at::Device device, at::ScalarType dtype, double budget_s) {
  at::NoGradGuard no_grad;
  const auto opts = at::TensorOptions().device(device).dtype(dtype);
  const int64_t n_max = device.is_cuda() ? 8192 : 1024;
  SquareProduct p(device.is_cuda() ? n_max : 256, opts);
  p.seconds(1);  // warm-up: library initialisation, first-touch of the pages
  double single = p.seconds(1);
  while (single < 5e-3 && p.n < n_max) {
    p = SquareProduct(p.n * 2, opts);
    p.seconds(1);
    single = p.seconds(1);
  }
  const int iters = std::clamp(static_cast<int>(0.02 / std::max(single, 1e-9)), 1, 20);
  double best = 0.0, spent = 0.0;
  for (int round = 0; round < 2 || spent < budget_s; ++round) {  // the best round: a busy moment slows only some
    const double s = p.seconds(iters);
    spent += s;
    best = std::max(best, iters * p.flops() / s);
  }
  return best;
}

}  // namespace ember
