// The input-embedding seam's interface: token ids -> the residual stream. model.embedding.kind
// picks the kind from its registry (model/embedding_registry.h); each kind gets the chassis sizes
// and its own section of options, model.embedding.<kind>.*.
#pragma once
#include <torch/nn/module.h>

#include <memory>
#include <string>

#include "ember/model/model_config.h"
#include "ember/model/tied_gradient.h"

namespace ember {

class Embedding : public torch::nn::Module {
 public:
  // ids [B, T] (int64) in [0, V) -> [B, T, D], in fp32 under autocast for every kind (the residual
  // stream's type); an id outside never reads another token's row. On the CPU it is an IndexError
  // naming the id and V; on a GPU an asynchronous device assert (no host sync), which stops the
  // process without naming the id; meta ids carry no values to check.
  at::Tensor forward(const at::Tensor& ids);
  // The V x D table the output head shares, or an undefined tensor when the head is untied.
  virtual at::Tensor tied_table() const { return {}; }
  // For a table the output head shares: the one gradient of that table the head and the next lookup
  // form together (model/tied_gradient.h), the lookup's rows added into the head's in place, where
  // autograd would add them into a copy of the dense V x D gradient; null when the kind has no tied
  // table. The head's loss hands the handoff its gradient (model/linear_cross_entropy.h).
  virtual std::shared_ptr<TiedTableGradient> share_gradient_with_head() { return nullptr; }
  // The full V x D input embedding, computed in chunks of `chunk` ids (for capacity analysis).
  virtual at::Tensor materialize(int64_t chunk = 4096);
  virtual int64_t vocab_size() const = 0;

 protected:
  virtual at::Tensor embed(const at::Tensor& ids) = 0;  // the kind's own: ids already in range
};

// The check of Embedding::forward, for other code that takes token ids (`what` names it in errors).
void check_token_ids(const at::Tensor& ids, int64_t vocab, const std::string& what);

// What every embedding kind is built from: the chassis sizes and the seam's config (kind,
// output scale and every kind's options; a factory passes its component only its own section).
struct EmbeddingContext {
  int64_t vocab_size = 0;
  int64_t d_model = 0;
  double init_std = 0.02;
  const EmbeddingConfig& config;
};

}  // namespace ember
