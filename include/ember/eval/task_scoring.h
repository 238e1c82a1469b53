// Zero-shot tasks scored by log-likelihood (docs/experiments.md, "Tasks"): multiple choice in the
// HellaSwag / PIQA / ARC layout (a context, endings, the index of the right one; accuracy by the
// summed log-likelihood of each ending and by it divided by the ending's length in characters, as
// lm-evaluation-harness's acc and acc_norm) and LAMBADA-style last-word prediction (right when
// every token of the final word is the greedy prediction given the true earlier ones). Requests
// are encoded as the harness does: a context's trailing whitespace moves to its continuation, and
// the continuation's tokens are those of context + continuation after the context's own.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ember/data/text_encoder.h"
#include "ember/model/lm.h"

namespace ember {

struct ContinuationScore {
  double logprob = 0;  // sum over the continuation's tokens of log p(token | everything before it)
  bool greedy = true;  // every continuation token is the argmax of the model's distribution there
  int64_t tokens = 0;
};

// Scores each continuation after the same context, in one batch (right-padded; a sequence longer
// than the model's max_seq_len + 1 loses tokens from the left of its context). The context needs
// at least one token; UsageError otherwise.
std::vector<ContinuationScore> score_continuations(LanguageModel& model, const std::vector<uint32_t>& context,
                                                   const std::vector<std::vector<uint32_t>>& continuations,
                                                   at::Device device);

// lm-evaluation-harness's request encoding: trailing whitespace of the context moves to the front
// of the continuation; context + continuation is tokenised as one text and the continuation is
// what follows the context's own tokens (so a merge across the seam is the continuation's).
std::pair<std::vector<uint32_t>, std::vector<uint32_t>> encode_request(const TextEncoder& encoder, std::string context,
                                                                       std::string continuation);

struct ChoiceItem {
  std::string context;
  std::vector<std::string> endings;  // as scored: with the separating space when one is needed
  std::vector<size_t> ending_chars;  // each ending's length in code points, without that space
  int64_t label = 0;
};
// JSONL, one item per line: {"context": ..., "endings": [...], "label": i} (HellaSwag's own "ctx"
// is accepted for "context", "choices" for "endings", a label written as a string of digits too).
// An ending gets a leading space unless the context ends with, or the ending starts with, whitespace.
// UsageError naming file:line for anything else.
std::vector<ChoiceItem> read_choice_items(const std::string& path);

struct ChoiceTally {
  int64_t items = 0, correct = 0, correct_norm = 0;
  double accuracy() const { return items ? static_cast<double>(correct) / static_cast<double>(items) : 0.0; }
  double accuracy_norm() const { return items ? static_cast<double>(correct_norm) / static_cast<double>(items) : 0.0; }
  // The item's pick is the highest log-likelihood (ties: the first); the normalised pick divides
  // each by its ending's length in characters (the harness's len(choice): no separating space).
  void add(const std::vector<double>& logprobs, const std::vector<size_t>& ending_chars, int64_t label);
};

struct LambadaItem {
  std::string context, target;  // target: " " + the passage's final word
};
// JSONL with a "text" per line (the lambada_openai layout), or plain text with one passage per
// line; each passage is split at its last space. UsageError naming file:line for a one-word passage.
std::vector<LambadaItem> read_lambada_items(const std::string& path);

struct LambadaTally {
  int64_t items = 0, correct = 0;
  double negative_logprob = 0;  // summed over items
  double accuracy() const { return items ? static_cast<double>(correct) / static_cast<double>(items) : 0.0; }
  double perplexity() const;  // exp of the mean negative log-likelihood of a target word
};

ChoiceTally score_choice_task(LanguageModel& model, const TextEncoder& encoder, const std::vector<ChoiceItem>& items,
                              at::Device device);
LambadaTally score_lambada_task(LanguageModel& model, const TextEncoder& encoder, const std::vector<LambadaItem>& items,
                                at::Device device);

}  // namespace ember
