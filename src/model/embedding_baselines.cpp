#include "ember/model/embedding_baselines.h"

#include <fmt/format.h>

#include <cmath>

#include "ember/model/init.h"
#include "ember/util/error.h"

namespace ember {

void AlbertConfig::fields(FieldVisitor& v) { v.field("dim", dim, Bound::non_negative()); }

void FlatMlpConfig::fields(FieldVisitor& v) {
  v.field("seed_dim", seed_dim, Bound::non_negative());
  v.field("hidden", hidden, Bound::non_negative());
}

void FactoredMlpConfig::fields(FieldVisitor& v) { v.field("hidden", hidden, Bound::non_negative()); }

int64_t albert_dim(const AlbertConfig& cfg, int64_t vocab, int64_t dim, int64_t budget) {
  if (cfg.dim > 0) return cfg.dim;
  return std::max<int64_t>(
      1, std::llround(static_cast<double>(budget) / static_cast<double>(vocab + dim)));  // P = m (V + D)
}

namespace {

// P = table + H (m + 1 + D) + D  (two linear layers with biases)
int64_t matched_hidden(int64_t set, const char* key, int64_t table, int64_t m, int64_t dim, int64_t budget) {
  if (set > 0) return set;
  const int64_t hidden = std::llround(static_cast<double>(budget - table - dim) / static_cast<double>(m + 1 + dim));
  if (hidden < 1)
    throw ConfigError(
        fmt::format("{}: the input side cannot match the budget of {} parameters (its seed table "
                    "alone has {}); set it explicitly",
                    key, budget, table));
  return hidden;
}

}  // namespace

MlpEmbeddingShape flat_mlp_shape(const FlatMlpConfig& cfg, int64_t vocab, int64_t dim, int64_t budget) {
  MlpEmbeddingShape s{vocab, dim};
  s.seed_dim =
      cfg.seed_dim > 0
          ? cfg.seed_dim
          : std::max<int64_t>(1, std::llround(static_cast<double>(budget) / (2.0 * vocab)));  // half to the table
  s.hidden = matched_hidden(cfg.hidden, "model.embedding.flat_mlp.hidden", vocab * s.seed_dim, s.seed_dim, dim, budget);
  return s;
}

MlpEmbeddingShape factored_mlp_shape(const FactoredMlpConfig& cfg, const LevConfig& lev, int64_t vocab, int64_t dim,
                                     int64_t budget) {
  MlpEmbeddingShape s{vocab, dim, lev.d_seed};
  s.digits = lev.k;
  s.base = lev_base(vocab, lev.k);
  s.hidden = matched_hidden(cfg.hidden, "model.embedding.factored_mlp.hidden", s.digits * s.base * s.seed_dim,
                            s.seed_dim, dim, budget);
  return s;
}

AlbertEmbedding::AlbertEmbedding(int64_t vocab, int64_t dim, int64_t m, double init_std) {
  table_ = register_parameter("table", normal_parameter({vocab, m}, init_std));
  proj_ = register_parameter("proj", normal_parameter({m, dim}, init_std));
}

at::Tensor AlbertEmbedding::embed(const at::Tensor& ids) { return at::matmul(at::embedding(table_, ids), proj_); }

MlpEmbedding::MlpEmbedding(const MlpEmbeddingShape& shape, double std) : shape_(shape) {
  if (shape.digits > 0)
    seeds_ = register_parameter("codebooks", normal_parameter({shape.digits, shape.base, shape.seed_dim}, std));
  else
    seeds_ = register_parameter("seeds", normal_parameter({shape.vocab, shape.seed_dim}, std));
  w1_ = register_parameter("w1", normal_parameter({shape.hidden, shape.seed_dim}, std));
  b1_ = register_parameter("b1", full_parameter({shape.hidden}, 0.0));
  w2_ = register_parameter("w2", normal_parameter({shape.dim, shape.hidden}, std));
  b2_ = register_parameter("b2", full_parameter({shape.dim}, 0.0));
}

at::Tensor MlpEmbedding::embed(const at::Tensor& ids) {
  at::Tensor seed;
  if (shape_.digits > 0) {
    auto sizes = ids.sizes().vec();
    sizes.push_back(shape_.seed_dim);
    seed = compositional_seed(seeds_, ids.reshape({-1}), shape_.base).view(sizes);
  } else {
    seed = at::embedding(seeds_, ids);
  }
  return at::linear(at::gelu(at::linear(seed, w1_, b1_)), w2_, b2_);
}

}  // namespace ember
