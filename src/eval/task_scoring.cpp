#include "ember/eval/task_scoring.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>

#include "ember/util/error.h"

namespace ember {
namespace {

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// Characters as Python's len() counts them: UTF-8 code points (every byte not a continuation byte).
size_t code_points(const std::string& text) {
  size_t n = 0;
  for (char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

// Lines of a file with their 1-based numbers, blank lines skipped.
std::vector<std::pair<int64_t, std::string>> lines_of(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError("task file '" + path + "' not found");
  std::vector<std::pair<int64_t, std::string>> out;
  int64_t n = 0;
  for (std::string line; std::getline(in, line);)
    if (++n, line.find_first_not_of(" \t\r") != std::string::npos) out.emplace_back(n, line);
  if (out.empty()) throw UsageError("task file '" + path + "' has no items");
  return out;
}

nlohmann::json parse_line(const std::string& path, int64_t n, const std::string& line) {
  try {
    return nlohmann::json::parse(line);
  } catch (const nlohmann::json::exception&) {
    throw UsageError(path + ":" + std::to_string(n) + ": not a JSON object");
  }
}

const nlohmann::json& field(const nlohmann::json& j, const std::vector<const char*>& names, const std::string& where) {
  for (const char* name : names)
    if (j.contains(name)) return j.at(name);
  throw UsageError(where + ": missing \"" + names.front() + "\"");
}

// A field that must hold text: UsageError naming it otherwise (a list where a string belongs).
std::string text_of(const nlohmann::json& j, const std::string& name, const std::string& where) {
  if (!j.is_string()) throw UsageError(where + ": \"" + name + "\" must be a string, not " + std::string(j.type_name()));
  return j.get<std::string>();
}

int64_t label_of(const nlohmann::json& j, const std::string& where) {
  if (j.is_number_integer()) return j.get<int64_t>();
  if (j.is_string() && !j.get<std::string>().empty() &&
      j.get<std::string>().find_first_not_of("0123456789") == std::string::npos)
    return std::stoll(j.get<std::string>());
  throw UsageError(where + ": \"label\" must be the index of the right ending");
}

}  // namespace

std::vector<ContinuationScore> score_continuations(LanguageModel& model, const std::vector<uint32_t>& context,
                                                   const std::vector<std::vector<uint32_t>>& continuations,
                                                   at::Device device) {
  if (context.empty()) throw UsageError("a task item's context has no tokens");
  const int64_t vocab = model.config().vocab_size;
  auto check_ids = [vocab](const std::vector<uint32_t>& ids) {
    for (uint32_t id : ids)
      if (id >= vocab)
        throw UsageError("a task's text encodes to token id " + std::to_string(id) +
                         ", outside the model's vocabulary of " + std::to_string(vocab) +
                         " (was the run trained on text with this tokenizer?)");
  };
  check_ids(context);
  for (const auto& cont : continuations) check_ids(cont);
  const int64_t limit = model.config().max_seq_len + 1;  // tokens: inputs are all but the last
  std::vector<std::vector<int64_t>> seqs;
  int64_t longest = 0;
  for (const auto& cont : continuations) {
    std::vector<int64_t> seq(context.begin(), context.end());
    seq.insert(seq.end(), cont.begin(), cont.end());
    if (static_cast<int64_t>(cont.size()) >= limit)
      throw UsageError("a task continuation of " + std::to_string(cont.size()) +
                       " tokens does not fit the model's max_seq_len with its context");
    if (static_cast<int64_t>(seq.size()) > limit) seq.erase(seq.begin(), seq.end() - limit);
    longest = std::max<int64_t>(longest, static_cast<int64_t>(seq.size()) - 1);
    seqs.push_back(std::move(seq));
  }
  auto ids = at::zeros({static_cast<int64_t>(seqs.size()), longest + 1}, at::kLong);
  for (size_t b = 0; b < seqs.size(); ++b)
    ids[static_cast<int64_t>(b)]
        .narrow(0, 0, static_cast<int64_t>(seqs[b].size()))
        .copy_(at::tensor(seqs[b], at::kLong));
  at::NoGradGuard no_grad;
  auto logp = at::log_softmax(model.forward(ids.narrow(1, 0, longest).to(device)).to(at::kDouble), -1).cpu();
  std::vector<ContinuationScore> out;
  for (size_t b = 0; b < seqs.size(); ++b) {
    ContinuationScore s;
    const int64_t length = static_cast<int64_t>(seqs[b].size()), n = static_cast<int64_t>(continuations[b].size());
    s.tokens = n;
    for (int64_t t = length - n; t < length; ++t) {  // target t is predicted at input position t - 1
      auto row = logp[static_cast<int64_t>(b)][t - 1];
      s.logprob += row[seqs[b][static_cast<size_t>(t)]].item<double>();
      s.greedy = s.greedy && row.argmax().item<int64_t>() == seqs[b][static_cast<size_t>(t)];
    }
    out.push_back(s);
  }
  return out;
}

std::pair<std::vector<uint32_t>, std::vector<uint32_t>> encode_request(const TextEncoder& encoder, std::string context,
                                                                       std::string continuation) {
  size_t keep = context.size();
  while (keep > 0 && is_space(context[keep - 1])) --keep;
  continuation.insert(0, context, keep);
  context.resize(keep);
  auto context_ids = encoder.encode(context);
  auto whole = encoder.encode(context + continuation);
  const size_t cut = std::min(context_ids.size(), whole.size());
  return {std::move(context_ids), std::vector<uint32_t>(whole.begin() + static_cast<std::ptrdiff_t>(cut), whole.end())};
}

std::vector<ChoiceItem> read_choice_items(const std::string& path) {
  std::vector<ChoiceItem> items;
  for (const auto& [n, line] : lines_of(path)) {
    const std::string where = path + ":" + std::to_string(n);
    const auto j = parse_line(path, n, line);
    ChoiceItem item;
    item.context = text_of(field(j, {"context", "ctx"}, where), "context", where);
    const auto& endings = field(j, {"endings", "choices"}, where);
    if (!endings.is_array() || endings.size() < 2)
      throw UsageError(where + ": \"endings\" must list at least 2 endings");
    for (const auto& e : endings) {
      auto text = text_of(e, "endings", where);
      const bool joined =
          !item.context.empty() && !is_space(item.context.back()) && !text.empty() && !is_space(text[0]);
      item.ending_chars.push_back(code_points(text));
      item.endings.push_back(joined ? " " + text : text);
    }
    item.label = label_of(field(j, {"label"}, where), where);
    if (item.label < 0 || item.label >= static_cast<int64_t>(item.endings.size()))
      throw UsageError(where + ": label " + std::to_string(item.label) + " is not an index of its " +
                       std::to_string(item.endings.size()) + " endings");
    items.push_back(std::move(item));
  }
  return items;
}

void ChoiceTally::add(const std::vector<double>& logprobs, const std::vector<size_t>& ending_chars, int64_t label) {
  size_t best = 0, best_norm = 0;
  auto norm = [&](size_t i) { return logprobs[i] / static_cast<double>(std::max<size_t>(ending_chars[i], 1)); };
  for (size_t i = 1; i < logprobs.size(); ++i) {
    if (logprobs[i] > logprobs[best]) best = i;
    if (norm(i) > norm(best_norm)) best_norm = i;
  }
  ++items;
  correct += static_cast<int64_t>(best) == label;
  correct_norm += static_cast<int64_t>(best_norm) == label;
}

std::vector<LambadaItem> read_lambada_items(const std::string& path) {
  std::vector<LambadaItem> items;
  for (const auto& [n, line] : lines_of(path)) {
    const std::string where = path + ":" + std::to_string(n);
    auto text = line.front() == '{' ? text_of(field(parse_line(path, n, line), {"text"}, where), "text", where) : line;
    while (!text.empty() && is_space(text.back())) text.pop_back();
    const auto cut = text.find_last_of(" \t");
    if (cut == std::string::npos || text.find_first_not_of(" \t") >= cut)
      throw UsageError(where + ": a passage needs a context before its final word");
    items.push_back({text.substr(0, cut), " " + text.substr(cut + 1)});
  }
  return items;
}

double LambadaTally::perplexity() const {
  return items ? std::exp(negative_logprob / static_cast<double>(items)) : 0.0;
}

ChoiceTally score_choice_task(LanguageModel& model, const TextEncoder& encoder, const std::vector<ChoiceItem>& items,
                              at::Device device) {
  ChoiceTally tally;
  for (const auto& item : items) {
    std::vector<uint32_t> context;
    std::vector<std::vector<uint32_t>> endings;
    for (const auto& e : item.endings) {
      auto [ctx, ending] = encode_request(encoder, item.context, e);
      context = std::move(ctx), endings.push_back(std::move(ending));
    }
    std::vector<double> logprobs;
    for (const auto& s : score_continuations(model, context, endings, device)) logprobs.push_back(s.logprob);
    tally.add(logprobs, item.ending_chars, item.label);
  }
  return tally;
}

LambadaTally score_lambada_task(LanguageModel& model, const TextEncoder& encoder, const std::vector<LambadaItem>& items,
                                at::Device device) {
  LambadaTally tally;
  for (const auto& item : items) {
    const auto [context, target] = encode_request(encoder, item.context, item.target);
    const auto s = score_continuations(model, context, {target}, device).front();
    ++tally.items;
    tally.correct += s.greedy;
    tally.negative_logprob -= s.logprob;
  }
  return tally;
}

}  // namespace ember
