#include "ember/model/embedding.h"
#include "ember/model/init.h"

#include "ember/model/embedding_baselines.h"
#include "ember/model/lev.h"
#include "ember/util/error.h"

namespace ember {

at::Tensor Embedding::materialize(int64_t chunk) {
  torch::NoGradGuard no_grad;
  std::vector<at::Tensor> parts;
  for (int64_t start = 0; start < vocab_size(); start += chunk) {
    auto ids = at::arange(start, std::min(start + chunk, vocab_size()), at::kLong);
    parts.push_back(forward(ids.unsqueeze(0)).squeeze(0).to(at::kFloat));
  }
  return at::cat(parts, 0);
}

TableEmbedding::TableEmbedding(int64_t vocab, int64_t dim, double init_std, bool tied)
    : tied_(tied) {
  weight_ = register_parameter("weight", normal_parameter({vocab, dim}, init_std));
}

at::Tensor TableEmbedding::forward(const at::Tensor& ids) { return at::embedding(weight_, ids); }

std::shared_ptr<Embedding> make_embedding(const ModelConfig& cfg) {
  const auto& kind = cfg.embedding.kind;
  if (kind == "tied" || kind == "untied")
    return std::make_shared<TableEmbedding>(cfg.vocab_size, cfg.d_model, cfg.init_std,
                                            kind == "tied");
  if (kind == "lev") return std::make_shared<LevEmbedding>(cfg.vocab_size, cfg.d_model, cfg.embedding.lev);
  const BaselineSizes sizes = baseline_sizes(cfg);
  if (kind == "albert") return std::make_shared<AlbertEmbedding>(cfg.vocab_size, cfg.d_model, sizes.albert_dim, cfg.init_std);
  if (kind == "flat_mlp" || kind == "factored_mlp")
    return std::make_shared<MlpEmbedding>(cfg, kind == "factored_mlp", sizes);
  throw ConfigError("model.embedding.kind: unknown kind '" + kind + "'");
}

}  // namespace ember
