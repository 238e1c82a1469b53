#include "ember/model/embedding_baselines.h"

#include <cmath>

#include "ember/model/init.h"
#include "ember/model/lev.h"
#include "ember/util/error.h"

namespace ember {

BaselineSizes baseline_sizes(const ModelConfig& cfg) {
  const auto& e = cfg.embedding;
  const double V = static_cast<double>(cfg.vocab_size), D = static_cast<double>(cfg.d_model);
  const double P = static_cast<double>(lev_parameter_count(cfg.vocab_size, cfg.d_model, e.lev));
  const double ds = static_cast<double>(e.lev.d_seed);
  const double codebooks = static_cast<double>(e.lev.k * lev_base(cfg.vocab_size, e.lev.k)) * ds;
  BaselineSizes s;
  s.albert_dim = e.albert_dim > 0 ? e.albert_dim : std::max<int64_t>(1, std::llround(P / (V + D)));  // P = m (V + D)
  s.seed_dim = e.seed_dim > 0 ? e.seed_dim : std::max<int64_t>(1, std::llround(P / (2 * V)));  // half to the table
  const double m = e.kind == "factored_mlp" ? ds : static_cast<double>(s.seed_dim);
  const double table = e.kind == "factored_mlp" ? codebooks : V * m;
  // P = table + H (m + 1 + D) + D  (two linear layers with biases)
  s.hidden = e.mlp_hidden > 0 ? e.mlp_hidden : std::llround((P - table - D) / (m + 1 + D));
  if ((e.kind == "flat_mlp" || e.kind == "factored_mlp") && s.hidden < 1)
    throw ConfigError("model.embedding.mlp_hidden: the " + e.kind + " input side cannot match P_LEV = " +
                      std::to_string(static_cast<int64_t>(P)) + " (its table alone is larger); set mlp_hidden "
                      "and seed_dim explicitly");
  return s;
}

AlbertEmbedding::AlbertEmbedding(int64_t vocab, int64_t dim, int64_t m, double init_std) {
  table_ = register_parameter("table", normal_parameter({vocab, m}, init_std));
  proj_ = register_parameter("proj", normal_parameter({m, dim}, init_std));
}

at::Tensor AlbertEmbedding::forward(const at::Tensor& ids) { return at::matmul(at::embedding(table_, ids), proj_); }

MlpEmbedding::MlpEmbedding(const ModelConfig& cfg, bool compositional, const BaselineSizes& sizes)
    : vocab_(cfg.vocab_size), compositional_(compositional) {
  const double std = cfg.init_std;
  int64_t m = sizes.seed_dim;
  if (compositional) {
    base_ = lev_base(cfg.vocab_size, cfg.embedding.lev.k);
    m = cfg.embedding.lev.d_seed;
    seeds_ = register_parameter("codebooks", normal_parameter({cfg.embedding.lev.k, base_, m}, std));
  } else {
    seeds_ = register_parameter("seeds", normal_parameter({cfg.vocab_size, m}, std));
  }
  w1_ = register_parameter("w1", normal_parameter({sizes.hidden, m}, std));
  b1_ = register_parameter("b1", full_parameter({sizes.hidden}, 0.0));
  w2_ = register_parameter("w2", normal_parameter({cfg.d_model, sizes.hidden}, std));
  b2_ = register_parameter("b2", full_parameter({cfg.d_model}, 0.0));
}

at::Tensor MlpEmbedding::forward(const at::Tensor& ids) {
  at::Tensor seed;
  if (compositional_) {
    auto flat = ids.reshape({-1});
    auto sizes = ids.sizes().vec();
    sizes.push_back(seeds_.size(2));
    seed = compositional_seed(seeds_, flat, base_).view(sizes);
  } else {
    seed = at::embedding(seeds_, ids);
  }
  return at::linear(at::gelu(at::linear(seed, w1_, b1_)), w2_, b2_);
}

}  // namespace ember
