#include "ember/model/mixer_registry.h"

#include "ember/config/kind_table.h"
#include "ember/model/mixers/attention.h"
#include "ember/model/mixers/hope_attention.h"
#include "ember/model/mixers/short_conv.h"
#include "ember/model/mixers/titans/titans.h"

namespace ember {
namespace {

// The registry: one row per kind. A new mixer is one file pair and one row here (docs/extending.md).
std::vector<MixerKind> build_mixer_table() {
  return {
      {.name = "attention",
       .description = "causal softmax attention with RoPE and GQA",
       .default_options = default_kind_options<AttentionConfig>,
       .make =
           [](const MixerContext& c) {
             return std::make_shared<Attention>(c, c.config.get<AttentionConfig>().impl, Gate::none);
           },
       .attention_gate = [](const MixerContext&) { return enum_name(Gate::none); }},
      {.name = "gated_attention",
       .description = "attention with a sigmoid gate on each head's output before W_O (G1)",
       .default_options = default_kind_options<GatedAttentionConfig>,
       .make =
           [](const MixerContext& c) {
             const auto& o = c.config.get<GatedAttentionConfig>();
             return std::make_shared<Attention>(c, o.impl, o.gate);
           },
       .mlp_budget =
           [](const MixerContext& c, int64_t d_ff) {
             const auto& o = c.config.get<GatedAttentionConfig>();
             if (!o.match_params || o.gate == Gate::none) return d_ff;
             const int64_t per_head = o.gate == Gate::elementwise ? c.head_dim : 1;
             return gate_matched_d_ff(d_ff, c.d_model, c.d_model * c.n_heads * per_head);
           },
       .attention_gate = [](const MixerContext& c) { return enum_name(c.config.get<GatedAttentionConfig>().gate); }},
      {.name = "short_conv",
       .description = "a causal depthwise convolution over the last k tokens, no attention (a local-mixing control)",
       .default_options = default_kind_options<ShortConvConfig>,
       .make = [](const MixerContext& c) { return std::make_shared<ShortConv>(c, c.config.get<ShortConvConfig>()); }},
      {.name = "titans",
       .description = "Titans: a neural long-term memory trained in context (lmm), or gating sliding-window attention (mag)",
       .default_options = default_kind_options<TitansConfig>,
       .make = [](const MixerContext& c) { return std::make_shared<Titans>(c, c.config.get<TitansConfig>()); }},
      {.name = "hope_attention",
       .description = "a preset: attention with the cms feed-forward (k MLP levels, static or updated in context), "
                      "its options in this section",
       .default_options = default_kind_options<HopeAttentionConfig>,
       .make =
           [](const MixerContext& c) {
             return std::make_shared<Attention>(c, c.config.get<HopeAttentionConfig>().impl, Gate::none);
           },
       .mlp_preset = [](const MixerConfig& m) { return m.get<HopeAttentionConfig>().feed_forward(); }},
  };
}

}  // namespace

const std::vector<MixerKind>& mixer_kinds() {
  static const std::vector<MixerKind> table = build_mixer_table();
  return table;
}

std::vector<std::string> mixer_kind_names() { return kind_names(mixer_kinds()); }
KindSections mixer_kind_options() { return kind_default_options(mixer_kinds()); }
std::vector<std::string> mixer_sections_used(const std::string& kind) {
  return kind_sections_used(mixer_kinds(), kind);
}
const MixerKind& mixer_kind(const std::string& name) { return find_kind(mixer_kinds(), name, "model.mixer.kind"); }
bool mixer_kind_is_preset(const std::string& kind) { return static_cast<bool>(mixer_kind(kind).mlp_preset); }

std::shared_ptr<Mixer> make_mixer(const MixerContext& ctx) { return mixer_kind(ctx.config.kind).make(ctx); }

int64_t mixer_mlp_budget(const MixerContext& ctx, int64_t d_ff) {
  const auto& row = mixer_kind(ctx.config.kind);
  return row.mlp_budget ? row.mlp_budget(ctx, d_ff) : d_ff;
}

}  // namespace ember
