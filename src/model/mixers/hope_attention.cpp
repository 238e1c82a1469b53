#include "ember/model/mixers/hope_attention.h"

#include "ember/util/error.h"

namespace ember {

void HopeAttentionConfig::fields(FieldVisitor& v) {
  v.choice("impl", impl);
  v.field("levels", levels, Bound::positive());
}

std::vector<int64_t> cms_level_widths(int64_t d_ff, int64_t levels) {
  if (d_ff < levels)
    throw ConfigError("model.mixer.hope_attention.levels = " + std::to_string(levels) +
                      " exceeds a layer's MLP width d_ff = " + std::to_string(d_ff) +
                      ": every CMS level needs a width of at least 1");
  std::vector<int64_t> widths(static_cast<size_t>(levels), d_ff / levels);
  for (int64_t l = 0; l < d_ff % levels; ++l) ++widths[static_cast<size_t>(l)];
  return widths;  // sum = d_ff: 3 d sum(widths) = 3 d d_ff weights, the Transformer's MLP
}

}  // namespace ember
