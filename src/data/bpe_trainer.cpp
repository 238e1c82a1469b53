#include "ember/data/bpe_trainer.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "ember/data/document_source.h"
#include "ember/data/pretokenizer.h"
#include "ember/data/tokenizer.h"
#include "ember/data/tokenizer_presets.h"
#include "ember/util/error.h"
#include "ember/util/files.h"
#include "ember/util/log.h"

namespace ember {
namespace {

using Pair = uint64_t;  // (left id << 32) | right id
Pair make_pair_key(uint32_t a, uint32_t b) { return (uint64_t(a) << 32) | b; }

struct Word {
  std::vector<uint32_t> ids;
  int64_t count = 0;
};

struct HeapEntry {
  int64_t count;
  Pair pair;
  bool operator<(const HeapEntry& o) const {  // max count first, then the smaller pair
    return count != o.count ? count < o.count : pair > o.pair;
  }
};

class PairMerger {
 public:
  explicit PairMerger(std::vector<Word> words) : words_(std::move(words)) {
    for (uint32_t w = 0; w < words_.size(); ++w) add_word_pairs(w, +1);
    for (const auto& [pair, count] : counts_) heap_.push({count, pair});
  }

  // The most frequent pair still present, or false when no pair is left.
  bool best(Pair& pair) {
    while (!heap_.empty()) {
      const HeapEntry top = heap_.top();
      const auto it = counts_.find(top.pair);
      if (it != counts_.end() && it->second == top.count && top.count > 0) {
        pair = top.pair;
        return true;
      }
      heap_.pop();  // stale
    }
    return false;
  }

  void merge(Pair pair, uint32_t new_id) {
    const uint32_t a = uint32_t(pair >> 32), b = uint32_t(pair);
    std::vector<uint32_t> affected = std::move(where_[pair]);
    where_.erase(pair);
    std::sort(affected.begin(), affected.end());
    affected.erase(std::unique(affected.begin(), affected.end()), affected.end());
    touched_.clear();
    for (const uint32_t w : affected) {
      auto& ids = words_[w].ids;
      if (!contains_pair(ids, a, b)) continue;
      add_word_pairs(w, -1);
      std::vector<uint32_t> merged;
      merged.reserve(ids.size());
      for (size_t i = 0; i < ids.size(); ++i) {
        if (i + 1 < ids.size() && ids[i] == a && ids[i + 1] == b) {
          merged.push_back(new_id);
          ++i;
        } else {
          merged.push_back(ids[i]);
        }
      }
      ids = std::move(merged);
      add_word_pairs(w, +1);
    }
    for (const Pair p : touched_) {
      const auto it = counts_.find(p);
      if (it == counts_.end()) continue;
      if (it->second <= 0)
        counts_.erase(it);
      else
        heap_.push({it->second, p});
    }
  }

 private:
  static bool contains_pair(const std::vector<uint32_t>& ids, uint32_t a, uint32_t b) {
    for (size_t i = 0; i + 1 < ids.size(); ++i)
      if (ids[i] == a && ids[i + 1] == b) return true;
    return false;
  }
  void add_word_pairs(uint32_t w, int sign) {
    const auto& word = words_[w];
    for (size_t i = 0; i + 1 < word.ids.size(); ++i) {
      const Pair p = make_pair_key(word.ids[i], word.ids[i + 1]);
      counts_[p] += sign * word.count;
      touched_.insert(p);
      if (sign > 0) where_[p].push_back(w);
    }
  }

  std::vector<Word> words_;
  std::unordered_map<Pair, int64_t> counts_;
  std::unordered_map<Pair, std::vector<uint32_t>> where_;  // may hold stale or repeated words
  std::unordered_set<Pair> touched_;
  std::priority_queue<HeapEntry> heap_;
};

std::vector<Word> count_words(const std::unordered_map<std::string, int64_t>& pieces) {
  std::vector<std::pair<std::string_view, int64_t>> sorted(pieces.begin(), pieces.end());
  std::sort(sorted.begin(), sorted.end());  // a fixed word order, independent of hashing
  std::vector<Word> words;
  words.reserve(sorted.size());
  for (const auto& [piece, count] : sorted) {
    if (piece.size() < 2) continue;
    Word w;
    w.count = count;
    for (unsigned char c : piece) w.ids.push_back(c);
    words.push_back(std::move(w));
  }
  return words;
}

BpeTrainResult train_from_counts(const std::unordered_map<std::string, int64_t>& pieces, const BpeTrainOptions& opt,
                                 bool progress) {
  if (opt.vocab_size < 257 || opt.vocab_size > (int64_t(1) << 31))
    throw UsageError("tokenizer train: --vocab-size must be at least 257 (256 bytes + <|endoftext|>), got " +
                     std::to_string(opt.vocab_size));
  BpeTrainResult r;
  r.unique_pieces = static_cast<int64_t>(pieces.size());
  for (int b = 0; b < 256; ++b) r.tokens.emplace_back(1, static_cast<char>(b));
  PairMerger merger(count_words(pieces));
  const int64_t target_ranks = opt.vocab_size - 1;
  Pair pair = 0;
  while (static_cast<int64_t>(r.tokens.size()) < target_ranks && merger.best(pair)) {
    const auto new_id = static_cast<uint32_t>(r.tokens.size());
    r.tokens.push_back(r.tokens[pair >> 32] + r.tokens[uint32_t(pair)]);
    merger.merge(pair, new_id);
    if (progress && new_id % 1000 == 0) log::info("tokenizer train: {} / {} ranks", new_id, target_ranks);
  }
  if (static_cast<int64_t>(r.tokens.size()) < target_ranks)
    log::warn("tokenizer train: the corpus ran out of pairs at {} ranks (asked for {})", r.tokens.size(), target_ranks);
  return r;
}

}  // namespace

BpeTrainResult train_bpe_on_text(const std::vector<std::string>& texts, const BpeTrainOptions& opt) {
  PreTokenizer pre(opt.pattern.empty() ? kGpt2Pattern : opt.pattern);
  std::unordered_map<std::string, int64_t> pieces;
  int64_t bytes = 0;
  for (const auto& t : texts) {
    bytes += static_cast<int64_t>(t.size());
    pre.split(t, [&](std::string_view p) { ++pieces[std::string(p)]; });
  }
  auto r = train_from_counts(pieces, opt, false);
  r.pattern = pre.pattern();
  r.corpus_bytes = bytes;
  return r;
}

BpeTrainResult train_bpe(const BpeTrainOptions& opt) {
  PreTokenizer pre(opt.pattern.empty() ? kGpt2Pattern : opt.pattern);
  std::unordered_map<std::string, int64_t> pieces;
  int64_t bytes = 0;
  for (const auto& doc : list_documents(opt.inputs, opt.extensions, "tokenizer train")) {
    const std::string text = read_text_file(doc);
    bytes += static_cast<int64_t>(text.size());
    pre.split(text, [&](std::string_view p) { ++pieces[std::string(p)]; });
  }
  if (opt.progress) log::info("tokenizer train: {} bytes, {} distinct pieces", bytes, pieces.size());
  auto r = train_from_counts(pieces, opt, opt.progress);
  r.pattern = pre.pattern();
  r.corpus_bytes = bytes;
  return r;
}

void save_trained_tokenizer(const BpeTrainResult& result, const std::filesystem::path& file) {
  if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path());
  write_rank_file(file, result.tokens);
  nlohmann::json side;
  side["pat_str"] = result.pattern;
  side["special_tokens"] = nlohmann::json::object();
  side["special_tokens"]["<|endoftext|>"] = result.tokens.size();
  side["n_vocab"] = result.tokens.size() + 1;
  write_file_atomic(file.string() + ".json", side.dump(2) + "\n");
}

}  // namespace ember
