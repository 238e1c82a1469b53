#include "ember/eval/perplexity.h"

#include <cmath>

#include "ember/model/autocast.h"

namespace ember {

void for_each_eval_batch(BatchLoader& loader, int64_t batches, at::Device device,
                         const std::function<void(const at::Tensor& x, const at::Tensor& y)>& fn) {
  at::NoGradGuard no_grad;
  const auto saved = loader.state();
  loader.restore(LoaderState{});
  if (batches == 0) {
    const int64_t per_batch = loader.next().size(0);
    loader.restore(LoaderState{});
    batches = std::max<int64_t>(1, loader.windows_per_epoch() / per_batch);
  }
  for (int64_t b = 0; b < batches; ++b) {
    auto batch = loader.next().to(device);
    fn(batch.narrow(1, 0, batch.size(1) - 1), batch.narrow(1, 1, batch.size(1) - 1));
  }
  loader.restore(saved);
}

EvalResult evaluate_perplexity(LanguageModel& model, BatchLoader& loader, int64_t batches, at::Device device,
                               bool bf16) {
  AutocastScope autocast(device, bf16);
  double total = 0.0;
  EvalResult r;
  for_each_eval_batch(loader, batches, device, [&](const at::Tensor& x, const at::Tensor& y) {
    total += model.loss(x, y).item<double>() * static_cast<double>(y.numel());
    r.tokens += y.numel();
  });
  r.loss = total / static_cast<double>(r.tokens);
  r.perplexity = std::exp(r.loss);
  return r;
}

}  // namespace ember
