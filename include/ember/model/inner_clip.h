// Per-token clipping of an in-context (inner) gradient, shared by the memories that learn at test
// time (Titans' neural memory, Hope-attention's CMS levels; docs/mixers.md, "A bounded inner step").
#pragma once
#include <ATen/ATen.h>

namespace ember {

// min(1, clip / ||u||) from ||u||^2, as clip / sqrt(max(||u||^2, clip^2)): no division by zero and
// no infinite derivative at u = 0, where a where() on clip / ||u|| would give NaN gradients.
inline at::Tensor inner_clip_factor(const at::Tensor& norm_squared, double clip) {
  return clip * at::rsqrt(at::clamp_min(norm_squared, clip * clip));
}

}  // namespace ember
