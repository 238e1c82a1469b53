// The Leviathan paper's input-embedding baselines (spec/leviathan.md, "Baselines"), each with a
// dense untied head and sized by default so the input side matches P_LEV for the same V and D:
//   albert:       E(i) = A[i] P,                     A in R^{V x m}, P in R^{m x D}
//   flat_mlp:     E(i) = MLP(A[i]),                  per-token seed A[i] in R^m (no composition)
//   factored_mlp: E(i) = MLP(sum_j C_j[i_j]),        compositional seed, no separable spline
// MLP(x) = W_2 GELU(W_1 x + b_1) + b_2 with hidden width H.
#pragma once
#include "ember/model/embedding.h"

namespace ember {

struct BaselineSizes {
  int64_t albert_dim = 0, seed_dim = 0, hidden = 0;
};
// The sizes a kind uses: explicit ones from the config, the rest matched to P_LEV.
BaselineSizes baseline_sizes(const ModelConfig& cfg);

class AlbertEmbedding : public Embedding {
 public:
  AlbertEmbedding(int64_t vocab, int64_t dim, int64_t m, double init_std);
  at::Tensor forward(const at::Tensor& ids) override;
  int64_t vocab_size() const override { return table_.size(0); }

 private:
  at::Tensor table_, proj_;
};

class MlpEmbedding : public Embedding {
 public:
  // compositional = false: flat_mlp with a V x m table; true: factored_mlp with k codebooks.
  MlpEmbedding(const ModelConfig& cfg, bool compositional, const BaselineSizes& sizes);
  at::Tensor forward(const at::Tensor& ids) override;
  int64_t vocab_size() const override { return vocab_; }

 private:
  int64_t vocab_, base_ = 0;
  bool compositional_;
  at::Tensor seeds_, w1_, b1_, w2_, b2_;
};

}  // namespace ember
