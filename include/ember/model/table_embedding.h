// Embedding kinds `tied` and `untied`: a dense V x D lookup table; tied = the output head reuses it.
#pragma once
#include "ember/model/embedding.h"

namespace ember {

class TableEmbedding : public Embedding {
 public:
  TableEmbedding(int64_t vocab, int64_t dim, double init_std, bool tied);
  at::Tensor embed(const at::Tensor& ids) override;
  at::Tensor tied_table() const override { return tied_ ? weight_ : at::Tensor(); }
  std::shared_ptr<TiedTableGradient> share_gradient_with_head() override;
  at::Tensor materialize(int64_t chunk) override { return weight_.detach().clone(); }
  int64_t vocab_size() const override { return weight_.size(0); }

 private:
  at::Tensor weight_;
  bool tied_;
  std::shared_ptr<TiedTableGradient> next_;  // for the next lookup that records a graph
};

}  // namespace ember
