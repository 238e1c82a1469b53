// Helpers of the ATen glue around ember's CUDA kernels (only for TUs built with EMBER_WITH_CUDA):
// the current stream of a tensor's device, and launch errors as ember::Error naming the op.
#pragma once
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <array>
#include <atomic>

#include "ember/util/error.h"
#include "ember/util/log.h"
#include "kernels/element_of.h"

namespace ember::cuda_glue {

inline void check_launch(const char* op, int status) {
  if (status != 0)
    throw Error(fmt::format("{}: CUDA launch failed: {}", op, cudaGetErrorString(static_cast<cudaError_t>(status))));
}

inline void* stream_of(const at::Tensor& t) { return at::cuda::getCurrentCUDAStream(t.device().index()).stream(); }

// Per-device answers of one kernel's probe: 0 not yet asked, 1 it runs, -1 it does not.
using ProbeCache = std::array<std::atomic<int>, 64>;

// Whether a kernel runs on `device`: probe() (a cudaError_t as int, 0 when the build holds the
// kernel's image or PTX for the device) asked once per device, with a warning naming `what` and
// `fallback` when not.
template <class Probe>
bool kernel_runs_on(ProbeCache& known, const at::Device& device, Probe probe, const char* what,
                    const char* fallback) {
  const int index = device.has_index() ? device.index() : c10::cuda::current_device();
  if (index < 0 || index >= static_cast<int>(known.size())) return false;
  if (const int k = known[index].load(); k != 0) return k > 0;
  const c10::cuda::CUDAGuard guard(device);
  const int status = probe();
  if (status != 0)
    log::warn("{}: ember's CUDA kernel cannot run on GPU {} ({}): {} instead; rebuild with this GPU in "
              "TORCH_CUDA_ARCH_LIST",
              what, index, cudaGetErrorString(static_cast<cudaError_t>(status)), fallback);
  known[index] = status == 0 ? 1 : -1;
  return status == 0;
}

}  // namespace ember::cuda_glue
