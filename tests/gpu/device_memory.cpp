// ctest gpu.device_memory (label gpu): the peak memory `ember train` reports on a GPU follows a
// known allocation and its reset; on the CPU there is none. Exit 77 (ctest's skip code) without CUDA.
#include <torch/cuda.h>

#include <iostream>

#include "ember/train/device_memory.h"
#include "tests/gpu/gpu_precondition.h"

int main() {
  if (ember::device_peak_memory(at::kCPU).has_value()) {
    std::cout << "FAIL: the CPU reported a device peak\n";
    return 1;
  }
  if (const int rc = gpu_precondition("gpu.device_memory")) return rc;
  const at::Device gpu(at::kCUDA, 0);
  constexpr int64_t bytes = int64_t{256} << 20;
  if (ember::device_peak_memory(gpu).has_value()) {  // CUDA's allocator starts with the first tensor
    std::cout << "FAIL: a peak before any CUDA tensor existed\n";
    return 1;
  }
  ember::reset_device_peak_memory(gpu);  // a no-op then, not an error
  (void)at::empty({1}, at::TensorOptions().device(gpu));
  ember::reset_device_peak_memory(gpu);
  { auto t = at::empty({bytes}, at::TensorOptions().dtype(at::kByte).device(gpu)); }
  const auto held = ember::device_peak_memory(gpu);
  ember::reset_device_peak_memory(gpu);
  const auto after_reset = ember::device_peak_memory(gpu);
  if (!held || !after_reset) {
    std::cout << "FAIL: no peak reported after CUDA allocations\n";
    return 1;
  }
  std::cout << "peak allocated " << held->allocated_bytes << " B, reserved " << held->reserved_bytes
            << " B; after reset " << after_reset->allocated_bytes << " B\n";
  const bool ok =
      held->allocated_bytes >= bytes && held->reserved_bytes >= bytes && after_reset->allocated_bytes < bytes;
  std::cout << (ok ? "OK" : "FAIL") << "\n";
  return ok ? 0 : 1;
}
