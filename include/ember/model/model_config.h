// model.* keys: the LLaMA-style chassis and its seams (embedding, mixer, feed-forward, per-layer
// MLP widths). The embedding, mixer and feed-forward kinds come from their registries
// (model/embedding_registry.h, model/mixer_registry.h, model/feed_forward_registry.h); each kind's
// options live in its own section, model.embedding.<kind>.*, model.mixer.<kind>.* and
// model.mlp.<kind>.*, and reach only that kind's component.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ember/config/fields.h"
#include "ember/model/taper.h"

namespace ember {

// The registries as the config sees them (tables in src/model/embedding_registry.cpp,
// mixer_registry.cpp and feed_forward_registry.cpp): the kinds, each kind's default options, and
// the sections a kind reads (its own and those of the kinds it is sized against), which the
// resolved config writes.
std::vector<std::string> embedding_kind_names();
KindSections embedding_kind_options();
std::vector<std::string> embedding_sections_used(const std::string& kind);
std::vector<std::string> mixer_kind_names();
KindSections mixer_kind_options();
std::vector<std::string> mixer_sections_used(const std::string& kind);
// Whether the mixer kind is a preset that brings its own feed-forward (MixerKind::mlp_preset).
bool mixer_kind_is_preset(const std::string& kind);
std::vector<std::string> feed_forward_kind_names();
KindSections feed_forward_kind_options();
std::vector<std::string> feed_forward_sections_used(const std::string& kind);

// model.embedding.*: kind (a row of the embedding registry) and each kind's section.
struct EmbeddingConfig : KindChoice {
  EmbeddingConfig() : KindChoice{"tied", embedding_kind_options()} {}
  double output_scale = 1.0;  // logits multiplier (e.g. 1/sqrt(d) conventions for tied heads)

  void fields(FieldVisitor& v);
};

enum class RopeScalingType { none, llama3 };
inline std::span<const EnumName<RopeScalingType>> enum_names(RopeScalingType) {
  static constexpr EnumName<RopeScalingType> names[] = {{RopeScalingType::none, "none"},
                                                        {RopeScalingType::llama3, "llama3"}};
  return names;
}

// model.mixer.rope_scaling.*: Llama 3.1's frequency-dependent RoPE scaling (docs/mixers.md, RoPE):
// long wavelengths slowed by `factor`, short ones kept, the band between interpolated.
struct RopeScalingConfig {
  RopeScalingType type = RopeScalingType::none;
  double factor = 8.0;
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  int64_t original_max_seq_len = 8192;  // the context the unscaled model was trained at

  void fields(FieldVisitor& v);
};

// model.mixer.*: kind (a row of the mixer registry) and each kind's section.
struct MixerConfig : KindChoice {
  MixerConfig() : KindChoice{"attention", mixer_kind_options()} {}
  double rope_base = 10000.0;  // RoPE base of the mixers that use positions
  RopeScalingConfig rope_scaling;

  void fields(FieldVisitor& v);
};

// model.mlp.*: the feed-forward kind (a row of its registry) with each kind's section, and the
// widths every kind shares.
struct MlpConfig : KindChoice {
  MlpConfig() : KindChoice{"swiglu", feed_forward_kind_options()} {}
  int64_t d_ff = 0;  // 0: 256 * ceil(8d/3 / 256), the fla/LLaMA default (docs/mixers.md)
  TaperConfig taper;

  void fields(FieldVisitor& v);
};

struct ModelConfig {
  int64_t vocab_size = 256;
  int64_t d_model = 128;
  int64_t n_layers = 4;
  int64_t n_heads = 4;
  int64_t n_kv_heads = 0;  // 0: same as n_heads (MHA)
  int64_t max_seq_len = 256;
  double norm_eps = 1e-6;
  double init_std = 0.02;
  bool scale_residual_init = false;  // o_proj and down_proj std divided by sqrt(2L)
  EmbeddingConfig embedding;
  MixerConfig mixer;
  MlpConfig mlp;

  void fields(FieldVisitor& v);
  void check(const ConfigChecker& c) const;

  int64_t kv_heads() const { return n_kv_heads == 0 ? n_heads : n_kv_heads; }
  int64_t head_dim() const { return d_model / n_heads; }
  double out_std() const;  // the std of each residual branch's output projection
  int64_t base_d_ff() const;
  std::vector<int64_t> layer_d_ff() const;  // one width per layer (the taper seam)
};

}  // namespace ember
