#include "ember/train/peak_flops.h"

#include <algorithm>
#include <chrono>

namespace ember {

double measure_matmul_peak(at::Device device, at::ScalarType dtype, int64_t n) {
  at::NoGradGuard no_grad;
  // A GPU does a 1024^3 matmul in microseconds, where launches and the sync dominate: time big ones.
  if (device.is_cuda()) n = std::max<int64_t>(n, 8192);
  const int iters = device.is_cuda() ? 20 : 4;
  auto opts = at::TensorOptions().device(device).dtype(dtype);
  auto a = at::randn({n, n}, opts), b = at::randn({n, n}, opts), c = at::empty({n, n}, opts);
  auto sync = [&] { (void)c.sum().item<float>(); };  // also waits for a GPU
  at::mm_out(c, a, b);
  sync();
  double best = 0.0;
  for (int rep = 0; rep < 5; ++rep) {  // the best of several: a busy moment only slows some
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) at::mm_out(c, a, b);
    sync();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, iters * 2.0 * n * n * n / s);
  }
  return best;
}

}  // namespace ember
