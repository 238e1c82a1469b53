// Activation checkpointing for LibTorch's C++ API, which has no torch.utils.checkpoint: the
// forward pass runs `fn` without a graph and keeps only its input; backward reruns `fn` on that
// input with gradients on (under the autocast state of the forward) and backpropagates the
// incoming gradient through it, which accumulates the parameters' gradients and yields the
// input's. Memory per block falls to its input; the cost is one more forward. `fn` must be
// deterministic (ember's blocks have no dropout).
#pragma once
#include <ATen/ATen.h>

#include <functional>

namespace ember {

using BlockFn = std::function<at::Tensor(const at::Tensor&)>;

at::Tensor checkpointed(const BlockFn& fn, const at::Tensor& x);

}  // namespace ember
