#include "ember/model/mixers/hope_attention.h"

#include "ember/model/model_config.h"

namespace ember {

void HopeAttentionConfig::fields(FieldVisitor& v) {
  v.choice("impl", impl);
  CmsConfig::fields(v);
}

KindChoice HopeAttentionConfig::feed_forward() const {
  KindChoice chain{CmsConfig::kKind, feed_forward_kind_options()};
  chain.get<CmsConfig>() = *this;
  return chain;
}

}  // namespace ember
