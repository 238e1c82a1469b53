// Helpers of the ATen glue around ember's CUDA kernels (only for TUs built with EMBER_WITH_CUDA):
// the current stream of a tensor's device, and launch errors as ember::Error naming the op.
#pragma once
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "ember/util/error.h"

namespace ember::cuda_glue {

inline void check_launch(const char* op, int status) {
  if (status != 0)
    throw Error(fmt::format("{}: CUDA launch failed: {}", op, cudaGetErrorString(static_cast<cudaError_t>(status))));
}

inline void* stream_of(const at::Tensor& t) { return at::cuda::getCurrentCUDAStream(t.device().index()).stream(); }

}  // namespace ember::cuda_glue
