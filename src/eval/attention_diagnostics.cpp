#include "ember/eval/attention_diagnostics.h"

#include "ember/eval/perplexity.h"
#include "ember/model/mixer_attention.h"
#include "ember/util/error.h"

namespace ember {

AttentionDiagnostics attention_diagnostics(LanguageModel& model, BatchLoader& loader, int64_t batches) {
  at::NoGradGuard no_grad;
  const auto L = model.blocks().size();
  std::vector<const MixerAttention*> mixers(L);
  for (size_t l = 0; l < L; ++l) {
    mixers[l] = model.blocks()[l]->mixer().attention();
    if (!mixers[l])
      throw UsageError("analyze attention: layer " + std::to_string(l) + " has mixer '" + model.config().mixer.kind +
                       "', not attention or gated_attention");
  }
  std::vector<double> gate_sum(L, 0.0), sink_sum(L, 0.0);
  AttentionDiagnostics out;
  int64_t queries = 0;  // (sequence, position >= 1) pairs
  // At most one pass over the windows, as evaluation: no query counts twice.
  for_each_eval_batch(loader, batches, model.device(), [&](const at::Tensor& ids, const at::Tensor&) {
    auto traces = model.trace(ids);
    for (size_t l = 0; l < L; ++l) {
      const auto& x = traces[l].mixer_input;
      auto P = mixers[l]->attention_probabilities(x, model.rope());  // [B, H, T, T]
      sink_sum[l] += P.select(-1, 0).narrow(-1, 1, P.size(-2) - 1).mean(1).sum().item<double>();
      auto G = mixers[l]->gate_values(x);
      if (G.defined()) gate_sum[l] += G.to(at::kDouble).mean().item<double>() * static_cast<double>(ids.numel());
    }
    out.tokens += ids.numel();
    queries += ids.size(0) * (ids.size(1) - 1);
  });
  for (size_t l = 0; l < L; ++l) {
    const bool gated = mixers[l]->gated();
    out.layers.push_back({static_cast<int64_t>(l), gated, gated ? gate_sum[l] / static_cast<double>(out.tokens) : 0.0,
                          sink_sum[l] / static_cast<double>(queries)});
  }
  return out;
}

}  // namespace ember
