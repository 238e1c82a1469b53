#include "ember/model/table_embedding.h"

#include "ember/model/init.h"

namespace ember {

TableEmbedding::TableEmbedding(int64_t vocab, int64_t dim, double init_std, bool tied) : tied_(tied) {
  weight_ = register_parameter("weight", normal_parameter({vocab, dim}, init_std));
}

at::Tensor TableEmbedding::forward(const at::Tensor& ids) { return at::embedding(weight_, ids); }

}  // namespace ember
