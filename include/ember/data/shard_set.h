// The train and val splits of one prepare run (`prepare bytes`, `prepare text`): shards staged in
// <out>/.incomplete and, in finish(), checked (no split empty), moved into place and described by
// train_token_counts.json and manifest.json, written last as the mark of a complete prepare. A
// prepare that throws before finish() returns leaves `out` as it was.
#pragma once
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "ember/data/shard_writer.h"

namespace ember {

struct PrepareSummary {
  int64_t files = 0, documents = 0, train_tokens = 0, val_tokens = 0;
  std::vector<std::filesystem::path> shards;
};

class ShardSet {
 public:
  ShardSet(std::filesystem::path out, int64_t shard_tokens, int64_t vocab_size);
  // DataError naming `where` for an id outside the vocabulary.
  void add(const std::vector<uint32_t>& ids, const std::string& where, bool val);

  struct Description {
    nlohmann::json tokenizer;  // the manifest's keys naming the tokenizer (tokenizer, separator, ...)
    nlohmann::json sources;    // one record per source
    int64_t files = 0;      // the source files
    int64_t documents = 0;  // a text file, a JSONL line, a Parquet row: what goes to one split
    double val_fraction = 0.0;  // 0: no val split (a train-only corpus)
    bool eval_only = false;        // an empty train split is expected (val_fraction 1)
    std::string empty_split_hint;  // the remedy a DataError for an empty split names
    nlohmann::json part;           // one part of a prepare in parts (data/prepare_parts.h), null:
                                   // the whole; a part's splits may be empty (merge checks them)
  };
  // The manifest holds `tokenizer`'s keys, vocab_size, dtype, val_fraction, the splits' token
  // counts and shard names, token_counts and sources (and `part` for a part).
  PrepareSummary finish(const Description& d);

 private:
  std::filesystem::path out_;
  int64_t vocab_size_;
  StagingGuard discard_on_error_;
  std::filesystem::path staging_;
  ShardWriter train_, val_;
};

}  // namespace ember
