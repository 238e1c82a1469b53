// Every attention mixer of a model set to one implementation (SDPA or the explicit masked softmax):
// tests compare the two, and the meta device has no decomposition of SDPA's C++ kernels.
#pragma once
#include "ember/model/lm.h"
#include "ember/model/mixers/attention.h"

namespace ember::testing {

inline void set_attention_impl(LanguageModel& model, AttentionImpl impl) {
  for (auto& block : model.blocks())
    if (auto* attention = dynamic_cast<Attention*>(&block->mixer())) attention->set_impl(impl);
}

}  // namespace ember::testing
