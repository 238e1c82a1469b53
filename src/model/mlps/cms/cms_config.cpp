#include "ember/model/mlps/cms/cms_config.h"

#include <cmath>

#include "ember/util/error.h"

namespace ember {

void CmsConfig::fields(FieldVisitor& v) {
  v.field("levels", levels, Bound::positive());
  v.choice("update", update);
  v.field("chunk_sizes", chunk_sizes, Bound::non_negative());
  v.field("inner_lr", inner_lr, Bound::non_negative());
  v.choice("signal", signal);
  v.field("differentiate_updates", differentiate_updates);
  v.added_field("inner_grad_clip", inner_grad_clip, 0.0, Bound::non_negative());  // before: unclipped
}

void CmsConfig::check(const ConfigChecker& c, const std::string& path) const {
  if (update != CmsUpdate::chunked) return;
  c.require(static_cast<int64_t>(chunk_sizes.size()) == levels, path + ".chunk_sizes",
            "has " + std::to_string(chunk_sizes.size()) + " entries but " + path + ".levels is " +
                std::to_string(levels) + ": give one chunk size per level (0 = a static level)");
  for (double size : chunk_sizes)
    c.require(size == std::floor(size) && size <= 1e9, path + ".chunk_sizes",
              "must hold whole numbers of tokens (at most 1e9; 0 = a static level)");
}

std::vector<LevelUpdate> CmsConfig::level_updates() const {
  if (update != CmsUpdate::chunked) return {};
  std::vector<LevelUpdate> rules;
  for (double size : chunk_sizes)
    rules.push_back({static_cast<int64_t>(size), inner_lr, differentiate_updates, signal, inner_grad_clip});
  return rules;
}

std::vector<int64_t> cms_level_widths(int64_t d_ff, int64_t levels, const std::string& path) {
  if (d_ff < levels)
    throw ConfigError(path + ".levels = " + std::to_string(levels) + " exceeds a layer's MLP width d_ff = " +
                      std::to_string(d_ff) + ": every CMS level needs a width of at least 1");
  std::vector<int64_t> widths(static_cast<size_t>(levels), d_ff / levels);
  for (int64_t l = 0; l < d_ff % levels; ++l) ++widths[static_cast<size_t>(l)];
  return widths;  // sum = d_ff: 3 d sum(widths) = 3 d d_ff weights, the Transformer's MLP
}

}  // namespace ember
