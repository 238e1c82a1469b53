#include "ember/model/table_embedding.h"

#include "ember/model/init.h"

namespace ember {

TableEmbedding::TableEmbedding(int64_t vocab, int64_t dim, double init_std, bool tied) : tied_(tied) {
  weight_ = register_parameter("weight", normal_parameter({vocab, dim}, init_std));
}

// Tied: the head's dense gradient of the table arrives first in backward, and the lookup's rows are
// added into it as a sparse gradient, instead of a zero-filled V x D table summed with it (two
// passes over V x D per step). The parameter's gradient stays dense. (No sparse kernels on meta.)
at::Tensor TableEmbedding::embed(const at::Tensor& ids) {
  const bool sparse_grad = tied_ && (weight_.is_cpu() || weight_.is_cuda());
  return at::embedding(weight_, ids, /*padding_idx=*/-1, /*scale_grad_by_freq=*/false, sparse_grad);
}

}  // namespace ember
