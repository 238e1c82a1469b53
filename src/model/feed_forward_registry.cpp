#include "ember/model/feed_forward_registry.h"

#include "ember/config/kind_table.h"
#include "ember/model/mixer_registry.h"
#include "ember/model/mlps/cms/cms_chain.h"
#include "ember/model/mlps/cms/cms_config.h"

namespace ember {
namespace {

// The registry: one row per kind. A new kind is one file pair and one row here (docs/extending.md).
std::vector<FeedForwardKind> build_feed_forward_table() {
  return {
      {.name = "swiglu", .description = "one SwiGLU MLP of the layer's width, as LLaMA has it"},
      {.name = "cms",
       .description = "a chain of k SwiGLU levels splitting the layer's width, static or updated in context "
                      "(Hope's Continuum Memory System)",
       .default_options = default_kind_options<CmsConfig>,
       .widths = cms_widths,
       .make = make_cms_chain},
  };
}

}  // namespace

const std::vector<FeedForwardKind>& feed_forward_kinds() {
  static const std::vector<FeedForwardKind> table = build_feed_forward_table();
  return table;
}

std::vector<std::string> feed_forward_kind_names() { return kind_names(feed_forward_kinds()); }
KindSections feed_forward_kind_options() { return kind_default_options(feed_forward_kinds()); }
std::vector<std::string> feed_forward_sections_used(const std::string& kind) {
  return kind_sections_used(feed_forward_kinds(), kind);
}
const FeedForwardKind& feed_forward_kind(const std::string& name) {
  return find_kind(feed_forward_kinds(), name, "model.mlp.kind");
}

FeedForwardChoice feed_forward_choice(const ModelConfig& cfg) {
  const auto& mixer = mixer_kind(cfg.mixer.kind);
  if (mixer.mlp_preset) return {mixer.mlp_preset(cfg.mixer), "model.mixer." + cfg.mixer.kind};
  return {cfg.mlp, "model.mlp." + cfg.mlp.kind};
}

FeedForwardContext feed_forward_context(const ModelConfig& cfg, int64_t layer, const FeedForwardChoice& choice) {
  return {cfg.d_model, layer, cfg.n_layers, cfg.init_std, cfg.out_std(), cfg.norm_eps, choice.config, choice.path};
}

std::unique_ptr<MlpChain> make_feed_forward(torch::nn::Module& owner, const FeedForwardContext& ctx, int64_t d_ff) {
  const auto& row = feed_forward_kind(ctx.config.kind);
  const auto widths = row.widths ? row.widths(ctx, d_ff) : std::vector<int64_t>{d_ff};
  return row.make ? row.make(owner, ctx, widths) : std::make_unique<MlpChain>(owner, ctx, widths);
}

}  // namespace ember
