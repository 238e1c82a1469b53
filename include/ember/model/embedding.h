// The input-embedding seam: model.embedding.kind picks an implementation (tied | untied here;
// LEV and the paper's baselines plug in through the same interface).
#pragma once
#include <torch/nn/module.h>

#include <memory>

#include "ember/model/model_config.h"

namespace ember {

class Embedding : public torch::nn::Module {
 public:
  // ids [B, T] (int64) -> [B, T, D]
  virtual at::Tensor forward(const at::Tensor& ids) = 0;
  // The V x D table the output head shares, or an undefined tensor when the head is untied.
  virtual at::Tensor tied_table() const { return {}; }
  // The full V x D input embedding, computed in chunks of `chunk` ids (for capacity analysis).
  virtual at::Tensor materialize(int64_t chunk = 4096);
  virtual int64_t vocab_size() const = 0;
};

// A dense V x D lookup table; tied = the output head reuses it.
class TableEmbedding : public Embedding {
 public:
  TableEmbedding(int64_t vocab, int64_t dim, double init_std, bool tied);
  at::Tensor forward(const at::Tensor& ids) override;
  at::Tensor tied_table() const override { return tied_ ? weight_ : at::Tensor(); }
  at::Tensor materialize(int64_t chunk) override { return weight_.detach().clone(); }
  int64_t vocab_size() const override { return weight_.size(0); }

 private:
  at::Tensor weight_;
  bool tied_;
};

std::shared_ptr<Embedding> make_embedding(const ModelConfig& cfg);

}  // namespace ember
