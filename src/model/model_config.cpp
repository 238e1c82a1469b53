#include "ember/model/model_config.h"

#include <fmt/format.h>

#include "ember/model/taper.h"
#include "ember/util/error.h"

namespace ember {

void ModelConfig::check(const ConfigChecker& c) const {
  c.require(d_model % n_heads == 0, "model.d_model",
            fmt::format("d_model = {} must be divisible by n_heads = {}", d_model, n_heads));
  c.require(kv_heads() <= n_heads && n_heads % kv_heads() == 0, "model.n_kv_heads",
            fmt::format("n_heads = {} must be a multiple of n_kv_heads = {}", n_heads, kv_heads()));
  c.require(head_dim() % 2 == 0, "model.n_heads",
            fmt::format("head dim d_model/n_heads = {} must be even for RoPE", head_dim()));
  c.require(mixer.kind == "gated_attention" || mixer.gate == "elementwise", "model.mixer.gate",
            fmt::format("gate = {} applies to model.mixer.kind = gated_attention, not {}", mixer.gate, mixer.kind));
  try {
    layer_d_ff();  // the taper settings must keep the budget
  } catch (const ConfigError& e) {
    throw ConfigError(c.origin("model.mlp.taper") + ": " + e.what());
  }
}

int64_t ModelConfig::base_d_ff() const {
  if (mlp.d_ff > 0) return mlp.d_ff;
  const int64_t raw = (8 * d_model + 2) / 3;  // ceil(8d/3)
  return 256 * ((raw + 255) / 256);
}

std::vector<int64_t> ModelConfig::layer_d_ff() const {
  return taper_widths(mlp.taper, n_layers, base_d_ff());
}

}  // namespace ember
