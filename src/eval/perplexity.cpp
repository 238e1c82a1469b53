#include "ember/eval/perplexity.h"

#include <cmath>

#include "ember/model/autocast.h"

namespace ember {

void for_each_eval_batch(BatchLoader& loader, int64_t batches, at::Device device,
                         const std::function<void(const at::Tensor& x, const at::Tensor& y)>& fn) {
  at::NoGradGuard no_grad;
  const auto saved = loader.state();
  loader.restore(LoaderState{});
  // One pass at most: every window once, the last step possibly partial; never wrapping around.
  const int64_t per_step = loader.windows_per_step();
  const int64_t pass = (loader.windows_per_epoch() + per_step - 1) / per_step;
  const int64_t steps = batches == 0 ? pass : std::min(batches, pass);
  for (int64_t b = 0; b < steps; ++b) {
    auto batch = loader.next_in_epoch();
    if (batch.size(0) == 0) continue;  // this rank's slice of a short last step
    batch = batch.to(device);
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
  r.loss = r.tokens > 0 ? total / static_cast<double>(r.tokens) : 0.0;  // a rank may get no rows
  r.perplexity = std::exp(r.loss);
  return r;
}

}  // namespace ember
