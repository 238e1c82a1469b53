// `ember prepare merge`: the parts of a prepare in parts (`ember prepare text --part I/N`, one job
// each) joined into one data directory, the same as a single-process prepare of the whole list
// would have written: the parts' tokens in part order, cut again into shards of the parts'
// --shard-tokens, their token counts summed and their sources listed in order.
#pragma once
#include <filesystem>
#include <vector>

#include "ember/data/shard_set.h"

namespace ember {

struct MergeOptions {
  std::vector<std::filesystem::path> parts;  // the part directories, in any order
  std::filesystem::path out_dir;
  bool progress = true;
};

// DataError naming the directory: a part that is unfinished (no manifest.json) or not a part, a part
// missing or given twice, parts of other prepares (another document list, tokenizer or
// --val-fraction), or a merged split that is empty. Nothing is written then.
PrepareSummary merge_prepared_parts(const MergeOptions& opt);

}  // namespace ember
