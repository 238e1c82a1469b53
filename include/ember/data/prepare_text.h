// Corpus preparation with a BPE tokenizer: text files, directories and JSONL (one document per
// line, its "text" field) -> token shards (uint16 when the vocabulary fits, else uint32) with the
// tokenizer's end-of-text id after each document, a train/val split per document (a hash of its
// path, or path:line for JSONL), train-split token frequencies and a manifest.
// Streaming: files are read in blocks of a few MB (cut after a newline), encoded by `threads`
// workers and written in order, so memory stays bounded and the output is deterministic.
// Shards are written under <out>/.incomplete/ and moved into place, manifest last, at the end.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "ember/data/prepare_bytes.h"

namespace ember {

struct TextPrepareOptions {
  std::vector<std::string> inputs;  // files or directories (recursively)
  std::vector<std::string> extensions = {".txt", ".rst", ".md", ".jsonl"};
  std::string tokenizer;  // preset name or rank file
  std::string jsonl_field = "text";
  std::filesystem::path out_dir;
  double val_fraction = 0.05;
  int64_t shard_tokens = 50'000'000;
  int threads = 2;
  bool progress = true;
  std::string corpus_name;  // recorded in the manifest when set (ember prepare corpus)
};

PrepareSummary prepare_text(const TextPrepareOptions& opt);

}  // namespace ember
