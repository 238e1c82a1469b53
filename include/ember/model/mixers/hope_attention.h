// Mixer kind `hope_attention` (Nested Learning, Behrouz et al. 2025, §7.1 / §8.3; docs/mixers.md,
// "Hope-attention"): softmax attention followed by a Continuum Memory System, a chain of k SwiGLU
// levels replacing the block's single MLP,
//   x <- x + Attn(RMSNorm(x));   for l = 1..k:  x <- x + MLP^(l)(RMSNorm_l(x))      (Eq. 30)
// Level widths split the layer's (tapered) d_ff, so the chain has the Transformer's MLP weights;
// k = 1 is the Transformer block. The levels are static (trained by the optimiser only, the spec's
// H0); the in-context chunked level updates (H1) are not implemented.
#pragma once
#include "ember/model/mixers/attention.h"

namespace ember {

// model.mixer.hope_attention.*
struct HopeAttentionConfig {
  static constexpr const char* kKind = "hope_attention";
  AttentionImpl impl = AttentionImpl::sdpa;
  int64_t levels = 4;  // k, the CMS levels per block

  void fields(FieldVisitor& v);
};

// d_ff split over `levels` widths as equal as integers allow (the first d_ff mod k one wider),
// summing to d_ff exactly; a ConfigError naming the keys when d_ff < levels.
std::vector<int64_t> cms_level_widths(int64_t d_ff, int64_t levels);

}  // namespace ember
