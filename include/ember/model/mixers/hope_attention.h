// Mixer kind `hope_attention` (Nested Learning, Behrouz et al. 2025, §7.1 / §8.3; docs/mixers.md,
// "Hope-attention"): a preset for softmax attention followed by the Continuum Memory System, i.e.
// model.mixer.kind: attention with model.mlp.kind: cms (model/mlps/cms/cms_config.h),
//   x <- x + Attn(RMSNorm(x));   for l = 1..k:  x <- x + MLP^(l)(RMSNorm_l(x))      (Eq. 30)
// with the attention's and the chain's options in one section, model.mixer.hope_attention.*, as
// configs and checkpoints written before the feed-forward seam have them.
#pragma once
#include "ember/model/mixers/attention.h"
#include "ember/model/mlps/cms/cms_config.h"

namespace ember {

// model.mixer.hope_attention.*: impl, then the CMS chain's keys (model.mlp.cms.*).
struct HopeAttentionConfig : CmsConfig {
  static constexpr const char* kKind = "hope_attention";
  AttentionImpl impl = AttentionImpl::sdpa;

  void fields(FieldVisitor& v);
  KindChoice feed_forward() const;  // model.mlp as the preset has it: kind cms with these options
};

}  // namespace ember
