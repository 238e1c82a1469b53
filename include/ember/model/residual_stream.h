// The residual stream between the norms that read it: the stream x and the residual branch's
// output m still to be added to it (undefined: none), x + m being the stream proper. The addition
// is made in the pass of the next norm that reads the stream (RMSNorm::add_forward: one read of x
// and m, h = x + m written beside RMSNorm(h)), not in a pass of its own. The language model, its
// blocks and their chains hand it on, in training, evaluation, the trace, activation
// checkpointing and decoding alike.
#pragma once
#include <ATen/ATen.h>

#include <optional>
#include <vector>

#include "ember/model/norm.h"

namespace ember {

class ResidualStream {
 public:
  explicit ResidualStream(at::Tensor x, at::Tensor pending = {});
  // RMSNorm(x + m) through `norm`; x + m, made in the same pass, becomes the stream and nothing is
  // pending. `y_type`: the type the reader casts its input to anyway (autocast's, for projections),
  // which the pass that makes a pending addition writes at no cost; RMSNorm(x) with nothing
  // pending (the first block's input), and any norm without `y_type`, is in the stream's type.
  at::Tensor normed(RMSNorm& norm, std::optional<at::ScalarType> y_type = std::nullopt);
  // Leaves m pending on the stream (what was still pending is added first, in a pass of its own).
  void add(at::Tensor m);
  at::Tensor sum() const;                          // x + m materialised (x when nothing is pending)
  const at::Tensor& stream() const { return x_; }  // x: without what is pending
  // {x} or {x, m}, and back: what activation checkpointing keeps and hands on.
  std::vector<at::Tensor> tensors() const;
  static ResidualStream of(const std::vector<at::Tensor>& tensors);

 private:
  at::Tensor x_, m_;
};

}  // namespace ember
