#include "ember/eval/memory_diagnostics.h"

#include "ember/eval/perplexity.h"
#include "ember/util/error.h"

namespace ember {
namespace {

void accumulate(std::vector<MemoryChunk>& sum, const std::vector<MemoryChunk>& add) {
  if (sum.empty()) {
    sum = add;
    return;
  }
  for (size_t i = 0; i < sum.size(); ++i) {
    auto& s = sum[i];
    const auto& a = add[i];
    s.w1_ratio += a.w1_ratio, s.w2_ratio += a.w2_ratio, s.contribution += a.contribution;
    s.theta += a.theta, s.eta += a.eta, s.alpha += a.alpha;
  }
}

}  // namespace

MemoryDiagnostics memory_diagnostics(LanguageModel& model, BatchLoader& loader, int64_t batches) {
  at::NoGradGuard no_grad;
  MemoryDiagnostics result;
  std::vector<int64_t> layers;
  std::vector<const MixerMemory*> memories;
  for (size_t l = 0; l < model.blocks().size(); ++l)
    if (const MixerMemory* memory = model.blocks()[l]->mixer().memory()) {
      layers.push_back(static_cast<int64_t>(l));
      memories.push_back(memory);
    }
  if (layers.empty())
    throw UsageError("analyze memory: the model's mixer is '" + model.config().mixer.kind + "', not titans");
  std::vector<std::vector<MemoryChunk>> sums(layers.size());
  int64_t n = 0;
  // At most one pass over the windows, as evaluation.
  for_each_eval_batch(loader, batches, model.device(), [&](const at::Tensor& ids, const at::Tensor&) {
    const auto traces = model.trace(ids);
    for (size_t i = 0; i < layers.size(); ++i)
      accumulate(sums[i], memories[i]->memory_profile(traces[layers[i]].mixer_input));
    result.sequences += ids.size(0), result.seq_len = ids.size(1), n += 1;
  });
  if (n == 0) throw DataError("analyze memory: --data holds no window of the sequence length");
  for (size_t i = 0; i < layers.size(); ++i) {
    MemoryLayer layer{layers[i], {}, sums[i]};
    for (auto& c : layer.chunks) {
      const double k = static_cast<double>(n);
      c.w1_ratio /= k, c.w2_ratio /= k, c.contribution /= k, c.theta /= k, c.eta /= k, c.alpha /= k;
    }
    layer.alpha_bias = memories[i]->forget_gate_bias();
    result.layers.push_back(std::move(layer));
  }
  return result;
}

}  // namespace ember
