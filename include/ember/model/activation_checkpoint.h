// Activation checkpointing for LibTorch's C++ API, which has no torch.utils.checkpoint: the
// forward pass runs `fn` without a graph and keeps only its input; backward reruns `fn` on that
// input with gradients on (under the autocast state of the forward) and backpropagates the
// incoming gradient through it, which accumulates the parameters' gradients and yields the
// input's. Memory per block falls to its input; the cost is one more forward. `fn` must be
// deterministic (ember's blocks have no dropout).
#pragma once
#include <ATen/ATen.h>

#include <functional>
#include <vector>

namespace ember {

using BlockFn = std::function<at::Tensor(const at::Tensor&)>;
// Several tensors in and out: a block that takes the stream and the addition still pending on it,
// and hands on its own (LanguageModel::hidden). Every input defined; gradients reach each input
// from the outputs a gradient reached.
using StreamFn = std::function<std::vector<at::Tensor>(const std::vector<at::Tensor>&)>;

at::Tensor checkpointed(const BlockFn& fn, const at::Tensor& x);
std::vector<at::Tensor> checkpointed(const StreamFn& fn, std::vector<at::Tensor> inputs);

}  // namespace ember
