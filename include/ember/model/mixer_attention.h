// A mixer that attends with a softmax over the tokens (attention, gated_attention, hope_attention),
// as seen from outside it: what `ember analyze attention` reads (eval/attention_diagnostics.h)
// without naming the kind. A mixer offers it through Mixer::attention().
#pragma once
#include <ATen/ATen.h>

#include "ember/model/rope.h"

namespace ember {

class MixerAttention {
 public:
  virtual ~MixerAttention() = default;
  // Attention probabilities P [B, H, T, T] of x [B, T, d], the mixer's normalised input (explicit
  // softmax, fp32 or wider).
  virtual at::Tensor attention_probabilities(const at::Tensor& x, const Rope& rope) const = 0;
  // The gate on each head's output for x [B, T, d]: [B, T, H, d_h] (elementwise) or [B, T, H, 1]
  // (headwise); undefined without a gate.
  virtual at::Tensor gate_values(const at::Tensor& x) const = 0;
  virtual bool gated() const = 0;
};

}  // namespace ember
