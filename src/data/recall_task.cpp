#include "ember/data/recall_task.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <numeric>

#include "ember/util/error.h"
#include "ember/util/files.h"

namespace ember {

void RecallSpec::check() const {
  if (keys < 1 || values < 2) throw UsageError(fmt::format("recall: need --keys >= 1 and --values >= 2 (got {}, {})", keys, values));
  if (pairs < 1 || pairs > keys)
    throw UsageError(fmt::format("recall: --pairs {} must be between 1 and --keys {} (keys are distinct)", pairs, keys));
  if (queries < 1 || queries > pairs)
    throw UsageError(fmt::format("recall: --queries {} must be between 1 and --pairs {}", queries, pairs));
}

RecallSequence recall_sequence(const RecallSpec& spec, std::mt19937_64& rng) {
  std::vector<uint32_t> keys(static_cast<size_t>(spec.keys));
  std::iota(keys.begin(), keys.end(), 0u);
  std::shuffle(keys.begin(), keys.end(), rng);  // the first P are this sequence's distinct keys
  std::vector<uint32_t> values(static_cast<size_t>(spec.pairs));
  std::uniform_int_distribution<uint32_t> value(static_cast<uint32_t>(spec.keys),
                                                static_cast<uint32_t>(spec.keys + spec.values - 1));
  RecallSequence s;
  for (int64_t i = 0; i < spec.pairs; ++i) {
    values[static_cast<size_t>(i)] = value(rng);
    s.tokens.insert(s.tokens.end(), {keys[static_cast<size_t>(i)], values[static_cast<size_t>(i)]});
  }
  s.tokens.push_back(static_cast<uint32_t>(spec.keys + spec.values));  // separator
  std::vector<size_t> asked(static_cast<size_t>(spec.pairs));
  std::iota(asked.begin(), asked.end(), size_t{0});
  std::shuffle(asked.begin(), asked.end(), rng);  // the first Q pairs, in random order, are queried
  for (int64_t j = 0; j < spec.queries; ++j) {
    const size_t pair = asked[static_cast<size_t>(j)];
    s.tokens.insert(s.tokens.end(), {keys[pair], values[pair]});
    s.answers.push_back(static_cast<int64_t>(s.tokens.size()) - 1);
  }
  return s;
}

std::string recall_item_json(const RecallSequence& s) {
  return nlohmann::json{{"tokens", s.tokens}, {"answers", s.answers}}.dump();
}

std::vector<RecallSequence> read_recall_items(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError("recall task file '" + path + "' not found");
  std::vector<RecallSequence> items;
  int64_t n = 0;
  for (std::string line; std::getline(in, line);) {
    if (++n, line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = path + ":" + std::to_string(n);
    try {
      const auto j = nlohmann::json::parse(line);
      RecallSequence s{j.at("tokens").get<std::vector<uint32_t>>(), j.at("answers").get<std::vector<int64_t>>()};
      for (int64_t a : s.answers)
        if (a < 1 || a >= static_cast<int64_t>(s.tokens.size()))
          throw UsageError(fmt::format("{}: answer position {} is outside 1..{}", where, a, s.tokens.size() - 1));
      if (s.answers.empty()) throw UsageError(where + ": no answer positions");
      items.push_back(std::move(s));
    } catch (const nlohmann::json::exception&) {
      throw UsageError(where + ": expected {\"tokens\": [...], \"answers\": [...]}");
    }
  }
  if (items.empty()) throw UsageError("recall task file '" + path + "' has no items");
  return items;
}

PrepareSummary prepare_recall(const RecallPrepareOptions& opt) {
  opt.spec.check();
  if (opt.train_sequences < 1 || opt.val_sequences < 1 || opt.task_items < 1)
    throw UsageError("prepare recall: --sequences, --val-sequences and --task-items must be positive");
  std::mt19937_64 rng(opt.seed);
  ShardSet shards(opt.out_dir, int64_t{1} << 26, opt.spec.vocab());
  for (int64_t i = 0; i < opt.train_sequences + opt.val_sequences; ++i)
    shards.add(recall_sequence(opt.spec, rng).tokens, "recall sequence", i >= opt.train_sequences);
  std::string task;
  for (int64_t i = 0; i < opt.task_items; ++i) task += recall_item_json(recall_sequence(opt.spec, rng)) + "\n";
  ShardSet::Description d;
  d.tokenizer = {{"tokenizer", "recall"}};
  d.sources = nlohmann::json::array({{{"recall", {{"keys", opt.spec.keys}, {"values", opt.spec.values},
                                                   {"pairs", opt.spec.pairs}, {"queries", opt.spec.queries},
                                                   {"sequence_length", opt.spec.length()}, {"seed", opt.seed}}}}});
  d.documents = opt.train_sequences + opt.val_sequences;
  d.val_fraction = static_cast<double>(opt.val_sequences) / static_cast<double>(d.documents);
  d.empty_split_hint = "give --sequences and --val-sequences";
  auto summary = shards.finish(d);
  write_file_atomic(opt.out_dir / "recall_task.jsonl", task);
  return summary;
}

}  // namespace ember
