// Activation checkpointing for LibTorch's C++ API, which has no torch.utils.checkpoint: the
// forward pass runs `fn` without a graph and keeps only its input; backward reruns `fn` on that
// input with gradients on (under the autocast state of the forward) and backpropagates the
// incoming gradient through it, which accumulates the parameters' gradients and yields the
// input's. Memory per block falls to its input; the cost is one more forward. `fn` must be
// deterministic (ember's blocks have no dropout).
#pragma once
#include <ATen/ATen.h>

#include <functional>

#include "ember/model/residual_stream.h"

namespace ember {

using BlockFn = std::function<at::Tensor(const at::Tensor&)>;
// A block on the residual stream (model/residual_stream.h), as LanguageModel::hidden runs it;
// checkpointed() keeps the stream's tensors, the stream and what is pending on it.
using StreamBlockFn = std::function<void(ResidualStream&)>;

at::Tensor checkpointed(const BlockFn& fn, const at::Tensor& x);
ResidualStream checkpointed(const StreamBlockFn& fn, const ResidualStream& stream);

}  // namespace ember
