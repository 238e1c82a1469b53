// Mean next-token loss and perplexity of a model over batches of a loader.
#pragma once
#include <cstdint>
#include <functional>

#include "ember/data/loader.h"
#include "ember/model/lm.h"

namespace ember {

struct EvalResult {
  double loss = 0.0;  // mean cross-entropy, nats per token
  double perplexity = 0.0;
  int64_t tokens = 0;
};

// Calls fn(inputs, targets) for `batches` batches from the loader's start (0: one full pass over
// its windows, the last batch possibly smaller; never more than one pass, so no window counts
// twice), without gradients, on `device`; the loader's position is restored afterwards.
void for_each_eval_batch(BatchLoader& loader, int64_t batches, at::Device device,
                         const std::function<void(const at::Tensor& x, const at::Tensor& y)>& fn);

// batches = 0: one full pass over the loader's windows.
EvalResult evaluate_perplexity(LanguageModel& model, BatchLoader& loader, int64_t batches, at::Device device,
                               bool bf16);

}  // namespace ember
