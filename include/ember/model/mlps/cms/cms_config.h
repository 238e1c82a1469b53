// Feed-forward kind `cms` (Nested Learning, Behrouz et al. 2025, §7.1 / §8.3; docs/mixers.md,
// "Hope-attention"): a Continuum Memory System, a chain of k SwiGLU levels replacing the block's
// single MLP,   for l = 1..k:  x <- x + MLP^(l)(RMSNorm_l(x))      (Eq. 30)
// Level widths split the layer's (tapered) d_ff, so the chain has the Transformer's MLP weights;
// k = 1 is the Transformer's MLP. `update: static` trains the levels by the optimiser only (the
// spec's H0); `update: chunked` also updates level l in context after every chunk_sizes[l] tokens
// (Eq. 71, the spec's H1; fast_swiglu.h, cms_chain.h), on a next-token teach signal taken from a
// first, static pass (signal: two_pass) or from the level's own output stream (signal: lens).
#pragma once
#include <string>
#include <vector>

#include "ember/config/fields.h"
#include "ember/model/mlps/cms/fast_swiglu.h"

namespace ember {

enum class CmsUpdate { static_levels, chunked };
inline std::span<const EnumName<CmsUpdate>> enum_names(CmsUpdate) {
  static constexpr EnumName<CmsUpdate> names[] = {{CmsUpdate::static_levels, "static"},
                                                  {CmsUpdate::chunked, "chunked"}};
  return names;
}

// model.mlp.cms.* (and, for the hope_attention preset, model.mixer.hope_attention.*)
struct CmsConfig {
  static constexpr const char* kKind = "cms";
  int64_t levels = 4;  // k, the CMS levels per block
  CmsUpdate update = CmsUpdate::static_levels;
  std::vector<double> chunk_sizes = {16, 64, 256, 0};  // C per level, fastest first; 0: static
  double inner_lr = 0.01;                              // eta^(l), every level
  TeachSource signal = TeachSource::two_pass;          // the teach signal: first static pass, or lens
  bool differentiate_updates = false;                  // outer gradients through the updates (else stop-grad)
  double inner_grad_clip = 1.0;  // each token's inner gradient to norm <= this (0: unclipped)

  void fields(FieldVisitor& v);
  void check(const ConfigChecker& c, const std::string& path) const;
  std::vector<LevelUpdate> level_updates() const;  // one per level; empty when static
};

// d_ff split over `levels` widths as equal as integers allow (the first d_ff mod k one wider),
// summing to d_ff exactly; a ConfigError naming `path`.levels when d_ff < levels.
std::vector<int64_t> cms_level_widths(int64_t d_ff, int64_t levels, const std::string& path);

}  // namespace ember
