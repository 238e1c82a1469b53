// A synthetic associative-recall task (multi-query associative recall, as in Zoology / Based):
// a sequence lists P key-value pairs, a separator, then Q queries, each an earlier key followed by
// its value. Keys are distinct within a sequence and values uniform, so a value is predictable only
// by finding its key earlier in the sequence: a model that does not mix across positions stays at
// chance (1 / values) on the answers, and one that recalls reaches 1. `ember prepare recall` writes
// shards of such sequences for training and a JSONL task of held-out ones for `ember eval --task recall`.
#pragma once
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "ember/data/shard_set.h"

namespace ember {

// Token layout: keys [0, keys), values [keys, keys + values), the separator keys + values.
struct RecallSpec {
  int64_t keys = 16, values = 16, pairs = 4, queries = 4;
  int64_t vocab() const { return keys + values + 1; }
  int64_t length() const { return 2 * pairs + 1 + 2 * queries; }  // tokens per sequence
  void check() const;  // UsageError naming the bad option (queries > pairs, pairs > keys, ...)
};

struct RecallSequence {
  std::vector<uint32_t> tokens;  // spec.length() tokens
  std::vector<int64_t> answers;  // positions of the queried values
};

RecallSequence recall_sequence(const RecallSpec& spec, std::mt19937_64& rng);

// One JSONL line: {"tokens": [...], "answers": [...]}; and its reader (UsageError naming file:line
// for an answer position outside 1..length-1 or a missing field).
std::string recall_item_json(const RecallSequence& s);
std::vector<RecallSequence> read_recall_items(const std::string& path);

struct RecallPrepareOptions {
  RecallSpec spec;
  std::filesystem::path out_dir;
  int64_t train_sequences = 20000, val_sequences = 1000, task_items = 500;
  uint64_t seed = 0;
};
// <out>/train_*.bin and val_*.bin (sequences back to back: train with seq_len = spec.length() and
// every window is one sequence), manifest.json, and <out>/recall_task.jsonl: task_items more
// sequences, drawn after the shards' (the same seed gives the same files).
PrepareSummary prepare_recall(const RecallPrepareOptions& opt);

}  // namespace ember
