#include "ember/model/summary.h"

#include "ember/model/init.h"
#include "ember/model/lm.h"

namespace ember {
namespace {

int64_t count(const std::vector<at::Tensor>& params) {
  int64_t n = 0;
  for (const auto& p : params) n += p.numel();
  return n;
}

int64_t mlp_parameters(const Block& b) {
  int64_t n = 0;
  for (const auto& mlp : b.mlps()) n += count(mlp->parameters());
  return n;
}

}  // namespace

ModelSummary summarize_model(const ModelConfig& cfg, int64_t seq_len) {
  MetaInitScope meta;
  LanguageModel model(cfg);
  ModelSummary s;
  s.vocab_size = cfg.vocab_size, s.d_model = cfg.d_model, s.seq_len = seq_len;
  s.embedding_kind = cfg.embedding.kind, s.mixer = cfg.mixer.kind, s.taper = enum_name(cfg.mlp.taper.schedule);
  for (size_t l = 0; l < model.blocks().size(); ++l) {
    auto& b = *model.blocks()[l];
    LayerSummary layer{static_cast<int64_t>(l),
                       cfg.mixer.kind,
                       b.mlp_width(),
                       count(b.mixer().parameters()),
                       mlp_parameters(b),
                       count(b.parameters()),
                       b.forward_flops_per_token(seq_len)};
    s.body_params += layer.params;
    s.layers.push_back(layer);
  }
  s.embedding_params = model.num_embedding_parameters();
  s.total_params = model.num_parameters();
  s.head_params = s.total_params - s.embedding_params - s.body_params;
  s.train_flops_per_token = model.train_flops_per_token(seq_len);
  s.causal_train_flops_per_token = model.causal_train_flops_per_token(seq_len);
  s.embedding_budget = embedding_budget(cfg);
  return s;
}

nlohmann::json ModelSummary::to_json() const {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& l : layers)
    rows.push_back({{"layer", l.layer},
                    {"mixer", l.mixer},
                    {"d_ff", l.d_ff},
                    {"mixer_params", l.mixer_params},
                    {"mlp_params", l.mlp_params},
                    {"params", l.params},
                    {"fwd_flops_per_token", l.fwd_flops_per_token}});
  nlohmann::json out = {{"vocab_size", vocab_size},
                        {"d_model", d_model},
                        {"embedding_kind", embedding_kind},
                        {"mixer", mixer},
                        {"taper", taper},
                        {"seq_len", seq_len},
                        {"layers", rows},
                        {"embedding_params", embedding_params},
                        {"body_params", body_params},
                        {"head_params", head_params},
                        {"total_params", total_params},
                        {"train_flops_per_token", train_flops_per_token},
                        {"causal_train_flops_per_token", causal_train_flops_per_token}};
  if (embedding_budget) {
    out["lev_budget_params"] = embedding_budget->params;
    out["embedding_vs_lev"] =
        static_cast<double>(embedding_params) / static_cast<double>(embedding_budget->params) - 1.0;
    out["embedding_step"] = embedding_budget->step;
  }
  return out;
}

}  // namespace ember
