// Mean next-token loss and perplexity of a model over batches of a loader.
#pragma once
#include <cstdint>

#include "ember/data/loader.h"
#include "ember/model/lm.h"

namespace ember {

struct EvalResult {
  double loss = 0.0;  // mean cross-entropy, nats per token
  double perplexity = 0.0;
  int64_t tokens = 0;
};

// batches = 0: one full pass over the loader's windows.
EvalResult evaluate_perplexity(LanguageModel& model, BatchLoader& loader, int64_t batches, at::Device device,
                               bool bf16);

}  // namespace ember
