#include "ember/eval/perplexity.h"

#include <cmath>

#include "ember/model/autocast.h"

namespace ember {

EvalResult evaluate_perplexity(LanguageModel& model, BatchLoader& loader, int64_t batches, at::Device device,
                               bool bf16) {
  at::NoGradGuard no_grad;
  AutocastScope autocast(device, bf16);
  const auto saved = loader.state();
  loader.restore(LoaderState{});
  if (batches == 0) {
    const int64_t per_batch = loader.next().size(0);
    loader.restore(LoaderState{});
    batches = std::max<int64_t>(1, loader.windows_per_epoch() / per_batch);
  }
  double total = 0.0;
  int64_t tokens = 0;
  for (int64_t b = 0; b < batches; ++b) {
    auto batch = loader.next().to(device);
    auto x = batch.narrow(1, 0, batch.size(1) - 1), y = batch.narrow(1, 1, batch.size(1) - 1);
    const int64_t n = y.numel();
    total += model.loss(x, y).item<double>() * n;
    tokens += n;
  }
  loader.restore(saved);
  EvalResult r;
  r.tokens = tokens;
  r.loss = total / static_cast<double>(tokens);
  r.perplexity = std::exp(r.loss);
  return r;
}

}  // namespace ember
