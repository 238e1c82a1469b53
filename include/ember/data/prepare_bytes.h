// Byte-level corpus preparation: text files -> uint16 token shards where token = byte value and
// documents (files) are separated by token 0 (NUL, absent from text). Vocabulary size 256.
// The split into train / val is per document, decided by a hash of its path, so it does not
// depend on the order files are found in.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "ember/data/shard_set.h"  // PrepareSummary

namespace ember {

struct BytePrepareOptions {
  std::vector<std::string> inputs;                                // files or directories (recursively)
  std::vector<std::string> extensions = {".txt", ".rst", ".md"};  // for directories
  std::filesystem::path out_dir;
  double val_fraction = 0.05;
  int64_t shard_tokens = 50'000'000;
};

PrepareSummary prepare_bytes(const BytePrepareOptions& opt);

}  // namespace ember
