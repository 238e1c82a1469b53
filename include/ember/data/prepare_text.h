// Corpus preparation with a BPE tokenizer: text files, directories, JSONL (one document per line,
// its "text" field) and Parquet (one document per row, its "text" column), text and JSONL also
// gzip- or zstd-compressed (data/text_units.h) -> token shards (uint16 when the vocabulary fits, else uint32) with the
// tokenizer's end-of-text id after each document, a train/val split per document (a hash of its
// path, path:line for JSONL, path:row for Parquet), train-split token frequencies and a manifest.
// Streaming: files are read in blocks of a few MB (cut after a newline), encoded by `threads`
// workers and written in order, so memory stays bounded and the output is deterministic.
// Shards are written under <out>/.incomplete/ and moved into place, manifest last, at the end.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "ember/data/prepare_bytes.h"
#include "ember/data/prepare_parts.h"

namespace ember {

struct TextPrepareOptions {
  std::vector<std::string> inputs;  // files or directories (recursively)
  std::vector<std::string> extensions = {".txt", ".rst", ".md", ".jsonl", ".jsonl.gz", ".jsonl.zst", ".parquet"};
  std::string tokenizer;  // preset name or rank file
  std::string jsonl_field = "text";
  std::string text_column = "text";  // of Parquet files
  PreparePart part;                  // one of N parts of the document list (--part I/N)
  std::filesystem::path out_dir;
  double val_fraction = 0.05;
  int64_t shard_tokens = 50'000'000;
  int threads = 2;
  bool progress = true;
  std::string corpus_name;  // recorded in the manifest when set (ember prepare corpus)
};

PrepareSummary prepare_text(const TextPrepareOptions& opt);

}  // namespace ember
