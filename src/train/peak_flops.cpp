#include "ember/train/peak_flops.h"

#include <chrono>

namespace ember {

double measure_matmul_peak(at::Device device, at::ScalarType dtype, int64_t n) {
  at::NoGradGuard no_grad;
  auto opts = at::TensorOptions().device(device).dtype(dtype);
  auto a = at::randn({n, n}, opts), b = at::randn({n, n}, opts), c = at::empty({n, n}, opts);
  auto sync = [&] { (void)c.sum().item<float>(); };  // also waits for a GPU
  at::mm_out(c, a, b);
  sync();
  double best = 0.0;
  for (int rep = 0; rep < 3; ++rep) {
    const int iters = 4;
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) at::mm_out(c, a, b);
    sync();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, iters * 2.0 * n * n * n / s);
  }
  return best;
}

}  // namespace ember
