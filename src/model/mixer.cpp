#include "ember/model/mixer.h"

namespace ember {

MixerContext mixer_context(const ModelConfig& cfg, int64_t layer) {
  return MixerContext{cfg.d_model,  cfg.n_heads,     cfg.kv_heads(), cfg.head_dim(), layer,
                      cfg.n_layers, cfg.max_seq_len, cfg.init_std,   cfg.out_std(),  cfg.norm_eps, cfg.mixer};
}

}  // namespace ember
