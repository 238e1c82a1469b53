// Titans as a MixerMemory (model/mixer_memory.h): the memory along a sequence, chunk by chunk, for
// `ember analyze memory` (docs/mixers.md, "Titans over long contexts").
#include "ember/model/mixers/titans/titans.h"

namespace ember {
namespace {

at::Tensor frobenius(const at::Tensor& w) { return w.pow(2).sum({-2, -1}).sqrt(); }  // [B, H]

double mean_of(const at::Tensor& x) { return x.mean().item<double>(); }

}  // namespace

std::vector<MemoryChunk> Titans::memory_profile(const at::Tensor& x) const {
  const auto ext = with_persistent(x);
  const int64_t n_p = ext.size(1) - x.size(1), C = cfg_.chunk_size;
  const auto in = memory_inputs(ext, nullptr);
  auto state = initial_state(x.size(0));
  const auto w1_0 = frobenius(state.w1), w2_0 = frobenius(state.w2);
  std::vector<MemoryChunk> chunks;
  for (int64_t start = 0; start < in.length(); start += C) {
    const auto part = in.narrow(start, std::min(C, in.length() - start));
    const auto y = memory_scan(state, part, cfg_.memory_rule());  // M_t(q), t in the chunk
    MemoryChunk c;
    c.end = std::max<int64_t>(start + part.length() - n_p, 0);
    c.w1_ratio = mean_of(frobenius(state.w1) / w1_0);
    c.w2_ratio = state.w2.numel() > 0 ? mean_of(frobenius(state.w2) / w2_0) : 1.0;  // linear: no W2
    c.contribution = mean_of((y - part.q).norm(2, -1) / part.q.norm(2, -1));  // ||M_t(q) - q|| / ||q||
    c.theta = mean_of(part.theta), c.eta = mean_of(part.eta), c.alpha = mean_of(part.alpha);
    chunks.push_back(c);
  }
  return chunks;
}

std::vector<double> Titans::forget_gate_bias() const {
  const auto bias = b_gates_[2].to(at::kDouble).cpu().contiguous();  // rows: theta, eta, alpha
  return {bias.data_ptr<double>(), bias.data_ptr<double>() + bias.numel()};
}

}  // namespace ember
