// What a gpu check does before its work: exit 77 (ctest's skip code) where there is no CUDA
// device, 1 where a device is there but the build lacks what the check needs, else go on (0).
#pragma once
#include <torch/cuda.h>

#include <iostream>

inline int gpu_precondition(const char* test, bool built = true, const char* needs = "") {
  if (!torch::cuda::is_available()) {
    std::cout << test << ": skipped: no CUDA device\n";
    return 77;
  }
  if (!built) {
    std::cout << "FAIL: " << test << ": a CUDA device but " << needs << "\n";
    return 1;
  }
  return 0;
}
