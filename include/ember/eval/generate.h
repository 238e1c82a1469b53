// Sampling continuations from a trained model through its decoding state (KV caches and other
// mixer states): temperature, top-k and nucleus (top-p) sampling from a seeded generator; a
// temperature of 0 is greedy and deterministic, the argmax of the full forward at every step.
#pragma once
#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ember/model/lm.h"

namespace ember {

struct SamplingOptions {
  int64_t max_tokens = 64;
  double temperature = 0.8;  // 0: greedy
  int64_t top_k = 0;         // keep the k most likely tokens (0: all)
  double top_p = 1.0;        // keep the smallest set whose probability reaches p (1: all)
  uint64_t seed = 0;
  std::optional<uint32_t> stop;  // a token that ends the continuation (e.g. the document separator)
  int64_t vocab_limit = 0;       // sample only ids below it (the tokenizer's vocabulary; 0: every logit)
};

// The next token of `logits` [V] (float). UsageError for options out of range.
int64_t sample_token(const at::Tensor& logits, const SamplingOptions& options, at::Generator& generator);

// A continuation of `prompt` (at least one id): up to max_tokens new ids, fewer when the stop token
// comes (it is not returned) or the model's max_seq_len is reached. `on_token` hears each id;
// `stopped` (when given) learns why it ended: "max_tokens", "stop_token" or "max_seq_len".
std::vector<uint32_t> generate(LanguageModel& model, const std::vector<uint32_t>& prompt,
                               const SamplingOptions& options, const std::function<void(uint32_t)>& on_token = {},
                               std::string* stopped = nullptr);

}  // namespace ember
