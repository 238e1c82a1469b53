// The Leviathan paper's input-embedding baselines (docs/leviathan.md, "Baselines"), each with a
// dense untied head and sized by default so the input side matches P_LEV for the same V and D:
//   albert:       E(i) = A[i] P,                     A in R^{V x m}, P in R^{m x D}
//   flat_mlp:     E(i) = MLP(A[i]),                  per-token seed A[i] in R^m (no composition)
//   factored_mlp: E(i) = MLP(sum_j C_j[i_j]),        compositional seed, no separable spline
// MLP(x) = W_2 GELU(W_1 x + b_1) + b_2 with hidden width H.
#pragma once
#include "ember/model/embedding.h"
#include "ember/model/lev.h"

namespace ember {

// model.embedding.albert.*
struct AlbertConfig {
  static constexpr const char* kKind = "albert";
  int64_t dim = 0;  // m; 0: m (V + D) matches the budget
  void fields(FieldVisitor& v);
};

// model.embedding.flat_mlp.*
struct FlatMlpConfig {
  static constexpr const char* kKind = "flat_mlp";
  int64_t seed_dim = 0;  // m; 0: half the budget goes to the V x m seed table
  int64_t hidden = 0;    // H; 0: the rest of the budget
  void fields(FieldVisitor& v);
};

// model.embedding.factored_mlp.*: the codebooks have LEV's shape (model.embedding.lev.{k, d_seed}).
struct FactoredMlpConfig {
  static constexpr const char* kKind = "factored_mlp";
  int64_t hidden = 0;  // H; 0: what the budget leaves after the codebooks
  void fields(FieldVisitor& v);
};

// The shape of an MLP embedding: seed table (flat: V x m) or k codebooks (b x d_s), then the MLP.
struct MlpEmbeddingShape {
  int64_t vocab = 0, dim = 0, seed_dim = 0, hidden = 0;
  int64_t digits = 0, base = 0;  // compositional seed when digits > 0
};

// Sizes matched to `budget` input-side parameters where the config leaves them 0. A budget the
// kind cannot meet (its table alone is larger) is a ConfigError naming the key to set.
int64_t albert_dim(const AlbertConfig& cfg, int64_t vocab, int64_t dim, int64_t budget);
MlpEmbeddingShape flat_mlp_shape(const FlatMlpConfig& cfg, int64_t vocab, int64_t dim, int64_t budget);
MlpEmbeddingShape factored_mlp_shape(const FactoredMlpConfig& cfg, const LevConfig& lev, int64_t vocab, int64_t dim,
                                     int64_t budget);

class AlbertEmbedding : public Embedding {
 public:
  AlbertEmbedding(int64_t vocab, int64_t dim, int64_t m, double init_std);
  at::Tensor embed(const at::Tensor& ids) override;
  int64_t vocab_size() const override { return table_.size(0); }

 private:
  at::Tensor table_, proj_;
};

class MlpEmbedding : public Embedding {
 public:
  MlpEmbedding(const MlpEmbeddingShape& shape, double init_std);
  at::Tensor embed(const at::Tensor& ids) override;
  int64_t vocab_size() const override { return shape_.vocab; }

 private:
  MlpEmbeddingShape shape_;
  at::Tensor seeds_, w1_, b1_, w2_, b2_;
};

}  // namespace ember
