#include "ember/eval/memory_diagnostics.h"

#include "ember/eval/perplexity.h"
#include "ember/model/mixers/titans/titans.h"
#include "ember/util/error.h"

namespace ember {
namespace {

at::Tensor frobenius(const at::Tensor& w) { return w.pow(2).sum({-2, -1}).sqrt(); }  // [B, H]

double mean_of(const at::Tensor& x) { return x.mean().item<double>(); }

// The memory of one Titans layer along the sequence x [B, T, d] (its normalised input), chunk by
// chunk as the forward pass runs it.
std::vector<MemoryChunk> profile(const Titans& titans, const at::Tensor& x) {
  const auto& cfg = titans.config();
  const auto ext = titans.with_persistent(x);
  const int64_t n_p = ext.size(1) - x.size(1), C = cfg.chunk_size;
  const auto in = titans.memory_inputs(ext, nullptr);
  auto state = titans.initial_state(x.size(0));
  const auto w1_0 = frobenius(state.w1), w2_0 = frobenius(state.w2);
  std::vector<MemoryChunk> chunks;
  for (int64_t start = 0; start < in.length(); start += C) {
    const auto part = in.narrow(start, std::min(C, in.length() - start));
    const auto y = memory_scan(state, part, cfg.memory_rule());  // M_t(q), t in the chunk
    MemoryChunk c;
    c.end = std::max<int64_t>(start + part.length() - n_p, 0);
    c.w1_ratio = mean_of(frobenius(state.w1) / w1_0);
    c.w2_ratio = state.w2.numel() > 0 ? mean_of(frobenius(state.w2) / w2_0) : 1.0;  // linear: no W2
    c.contribution = mean_of((y - part.q).norm(2, -1) / part.q.norm(2, -1));
    c.theta = mean_of(part.theta), c.eta = mean_of(part.eta), c.alpha = mean_of(part.alpha);
    chunks.push_back(c);
  }
  return chunks;
}

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
  for (size_t l = 0; l < model.blocks().size(); ++l)
    if (dynamic_cast<Titans*>(&model.blocks()[l]->mixer())) layers.push_back(static_cast<int64_t>(l));
  if (layers.empty())
    throw UsageError("analyze memory: the model's mixer is '" + model.config().mixer.kind + "', not titans");
  std::vector<std::vector<MemoryChunk>> sums(layers.size());
  int64_t n = 0;
  // At most one pass over the windows, as evaluation.
  for_each_eval_batch(loader, batches, model.device(), [&](const at::Tensor& ids, const at::Tensor&) {
    const auto traces = model.trace(ids);
    for (size_t i = 0; i < layers.size(); ++i) {
      const auto& titans = dynamic_cast<Titans&>(model.blocks()[layers[i]]->mixer());
      accumulate(sums[i], profile(titans, traces[layers[i]].mixer_input));
    }
    result.sequences += ids.size(0), result.seq_len = ids.size(1), n += 1;
  });
  if (n == 0) throw DataError("analyze memory: --data holds no window of the sequence length");
  for (size_t i = 0; i < layers.size(); ++i) {
    MemoryLayer layer{layers[i], {}, sums[i]};
    for (auto& c : layer.chunks) {
      const double k = static_cast<double>(n);
      c.w1_ratio /= k, c.w2_ratio /= k, c.contribution /= k, c.theta /= k, c.eta /= k, c.alpha /= k;
    }
    const auto& titans = dynamic_cast<Titans&>(model.blocks()[layers[i]]->mixer());
    const auto bias = titans.gate_biases()[2].to(at::kDouble).cpu().contiguous();
    layer.alpha_bias.assign(bias.data_ptr<double>(), bias.data_ptr<double>() + bias.numel());
    result.layers.push_back(std::move(layer));
  }
  return result;
}

}  // namespace ember
