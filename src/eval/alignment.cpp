#include "ember/eval/alignment.h"

#include "ember/eval/perplexity.h"

namespace ember {

namespace {
at::Tensor row_cosines(const at::Tensor& a, const at::Tensor& b) {
  auto a2 = a.reshape({-1, a.size(-1)}).to(at::kDouble), b2 = b.reshape({-1, b.size(-1)}).to(at::kDouble);
  auto denom = (a2.norm(2, -1) * b2.norm(2, -1)).clamp_min(1e-300);
  return (a2 * b2).sum(-1) / denom;  // cos = <a, b> / (|a| |b|); zero rows give 0
}
}  // namespace

AlignmentResult residual_alignment(LanguageModel& model, BatchLoader& loader, int64_t batches) {
  at::NoGradGuard no_grad;
  const auto L = static_cast<size_t>(model.config().n_layers);
  std::vector<double> mixer_sum(L, 0.0), mlp_sum(L, 0.0);
  AlignmentResult result;
  // At most one pass over the windows, as evaluation: no token counts twice.
  for_each_eval_batch(loader, batches, model.device(), [&](const at::Tensor& ids, const at::Tensor&) {
    auto traces = model.trace(ids);
    for (size_t l = 0; l < L; ++l) {
      mixer_sum[l] += row_cosines(traces[l].mixer_out, traces[l].mixer_residual).sum().item<double>();
      mlp_sum[l] += row_cosines(traces[l].mlp_out, traces[l].mlp_residual).sum().item<double>();
    }
    result.tokens += ids.numel();
  });
  for (size_t l = 0; l < L; ++l)
    result.layers.push_back({static_cast<int64_t>(l), mixer_sum[l] / static_cast<double>(result.tokens),
                             mlp_sum[l] / static_cast<double>(result.tokens)});
  return result;
}

}  // namespace ember
