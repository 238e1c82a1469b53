#include "ember/model/model_config.h"

#include <fmt/format.h>

#include <cmath>

#include "ember/util/error.h"

namespace ember {

void EmbeddingConfig::fields(FieldVisitor& v) {
  v.choice("kind", kind, embedding_kind_names());
  v.kind_sections(options, embedding_sections_used(kind));
  v.field("output_scale", output_scale, Bound::positive());
  v.moved("albert_dim", "model.embedding.albert.dim");
  v.moved("seed_dim", "model.embedding.flat_mlp.seed_dim");
  v.moved("mlp_hidden", "model.embedding.flat_mlp.hidden / model.embedding.factored_mlp.hidden");
}

void MixerConfig::fields(FieldVisitor& v) {
  v.choice("kind", kind, mixer_kind_names());
  v.kind_sections(options, mixer_sections_used(kind));
  v.field("rope_base", rope_base, Bound::positive());
  v.added_section("rope_scaling", rope_scaling);  // before: none
  v.moved("gate", "model.mixer.gated_attention.gate");
  v.moved("impl", "model.mixer.<kind>.impl (e.g. model.mixer.attention.impl)");
}

void RopeScalingConfig::fields(FieldVisitor& v) {
  v.choice("type", type);
  v.field("factor", factor, Bound::positive());
  v.field("low_freq_factor", low_freq_factor, Bound::positive());
  v.field("high_freq_factor", high_freq_factor, Bound::positive());
  v.field("original_max_seq_len", original_max_seq_len, Bound::positive());
}

void MlpConfig::fields(FieldVisitor& v) {
  v.added_choice("kind", kind, feed_forward_kind_names(), std::string("swiglu"));  // before: one SwiGLU
  v.kind_sections(options, feed_forward_sections_used(kind));
  v.field("d_ff", d_ff, Bound::non_negative());
  v.section("taper", taper);
}

void ModelConfig::fields(FieldVisitor& v) {
  v.field("vocab_size", vocab_size, Bound::positive());
  v.field("d_model", d_model, Bound::positive());
  v.field("n_layers", n_layers, Bound::positive());
  v.field("n_heads", n_heads, Bound::positive());
  v.field("n_kv_heads", n_kv_heads, Bound::non_negative());
  v.field("max_seq_len", max_seq_len, Bound::positive());
  v.field("norm_eps", norm_eps, Bound::positive());
  v.field("init_std", init_std, Bound::positive());
  v.field("scale_residual_init", scale_residual_init);
  v.section("embedding", embedding);
  v.section("mixer", mixer);
  v.section("mlp", mlp);
}

void ModelConfig::check(const ConfigChecker& c) const {
  c.require(d_model % n_heads == 0, "model.d_model",
            fmt::format("d_model = {} must be divisible by n_heads = {}", d_model, n_heads));
  c.require(kv_heads() <= n_heads && n_heads % kv_heads() == 0, "model.n_kv_heads",
            fmt::format("n_heads = {} must be a multiple of n_kv_heads = {}", n_heads, kv_heads()));
  c.require(head_dim() % 2 == 0, "model.n_heads",
            fmt::format("head dim d_model/n_heads = {} must be even for RoPE", head_dim()));
  const auto& s = mixer.rope_scaling;
  c.require(
      s.type == RopeScalingType::none || s.high_freq_factor > s.low_freq_factor,
      "model.mixer.rope_scaling.high_freq_factor",
      fmt::format("high_freq_factor = {} must exceed low_freq_factor = {}", s.high_freq_factor, s.low_freq_factor));
  embedding.check_selected(c, "model.embedding");
  mixer.check_selected(c, "model.mixer");
  mlp.check_selected(c, "model.mlp");
  c.require(!mixer_kind_is_preset(mixer.kind) || mlp.kind == MlpConfig{}.kind, "model.mlp.kind",
            fmt::format("is '{}', but model.mixer.kind '{}' is a preset with its own feed-forward (its options are "
                        "model.mixer.{}.*): use model.mixer.kind: attention to pair attention with this kind",
                        mlp.kind, mixer.kind, mixer.kind));
  try {
    layer_d_ff();  // the taper settings must keep the budget
  } catch (const ConfigError& e) {
    throw ConfigError(c.origin("model.mlp.taper") + ": " + e.what());
  }
}

double ModelConfig::out_std() const {
  return scale_residual_init ? init_std / std::sqrt(2.0 * static_cast<double>(n_layers)) : init_std;
}

int64_t ModelConfig::base_d_ff() const {
  if (mlp.d_ff > 0) return mlp.d_ff;
  const int64_t raw = (8 * d_model + 2) / 3;  // ceil(8d/3)
  return 256 * ((raw + 255) / 256);
}

std::vector<int64_t> ModelConfig::layer_d_ff() const { return taper_widths(mlp.taper, n_layers, base_d_ff()); }

}  // namespace ember
