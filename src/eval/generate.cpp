#include "ember/eval/generate.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>

#include "ember/util/error.h"

namespace ember {
namespace {

void check(const SamplingOptions& o) {
  if (!(o.temperature >= 0)) throw UsageError("--temperature: expected a value >= 0");
  if (o.top_k < 0) throw UsageError("--top-k: expected a value >= 0");
  if (!(o.top_p > 0 && o.top_p <= 1)) throw UsageError("--top-p: expected a value in (0, 1]");
  if (o.max_tokens < 0) throw UsageError("--tokens: expected a value >= 0");
}

}  // namespace

int64_t sample_token(const at::Tensor& logits, const SamplingOptions& o, at::Generator& generator) {
  check(o);
  auto z = logits.to(at::kDouble);
  if (o.temperature == 0 || o.top_k == 1) return z.argmax().item<int64_t>();  // greedy
  auto [sorted, order] = z.div(o.temperature).sort(/*dim=*/-1, /*descending=*/true);
  if (o.top_k > 0 && o.top_k < sorted.size(0))  // below the k-th largest; ties with it stay (as HF's top-k)
    sorted.masked_fill_(sorted < sorted[o.top_k - 1], -INFINITY);
  auto probs = at::softmax(sorted, -1);
  if (o.top_p < 1) {  // nucleus: the smallest prefix whose mass reaches p (the most likely always stays)
    auto before = probs.cumsum(0) - probs;  // mass of the strictly more likely tokens
    probs.masked_fill_(before >= o.top_p, 0.0);
  }
  const auto pick = at::multinomial(probs.to(at::kCPU), 1, /*replacement=*/false, generator).item<int64_t>();
  return order[pick].item<int64_t>();
}

std::vector<uint32_t> generate(LanguageModel& model, const std::vector<uint32_t>& prompt, const SamplingOptions& o,
                               const std::function<void(uint32_t)>& on_token, std::string* stopped) {
  check(o);
  if (prompt.empty()) throw UsageError("generate: the prompt encodes to no tokens");
  const int64_t max_len = model.config().max_seq_len;
  if (static_cast<int64_t>(prompt.size()) > max_len)
    throw UsageError("generate: the prompt has " + std::to_string(prompt.size()) +
                     " tokens, more than model.max_seq_len = " + std::to_string(max_len));
  at::NoGradGuard no_grad;
  auto generator = at::make_generator<at::CPUGeneratorImpl>(o.seed);
  const auto opts = at::TensorOptions(at::kLong).device(model.device());
  DecodeState state;
  std::vector<int64_t> ids(prompt.begin(), prompt.end());
  auto logits = model.decode(at::tensor(ids, opts).unsqueeze(0), state);
  const int64_t V = logits.size(-1);
  const int64_t sampled = o.vocab_limit > 0 && o.vocab_limit < V ? o.vocab_limit : V;  // ids the tokenizer has
  std::vector<uint32_t> out;
  std::string why = "max_tokens";
  while (static_cast<int64_t>(out.size()) < o.max_tokens) {
    const auto next = static_cast<uint32_t>(sample_token(logits[0][-1].narrow(0, 0, sampled), o, generator));
    if (o.stop && next == *o.stop) {
      why = "stop_token";
      break;
    }
    out.push_back(next);
    if (on_token) on_token(next);
    if (state.position >= max_len) {  // no room to feed it back
      if (static_cast<int64_t>(out.size()) < o.max_tokens) why = "max_seq_len";
      break;
    }
    logits = model.decode(at::full({1, 1}, static_cast<int64_t>(next), opts), state);
  }
  if (stopped) *stopped = why;
  return out;
}

}  // namespace ember
