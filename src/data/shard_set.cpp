#include "ember/data/shard_set.h"

#include <fmt/format.h>

#include "ember/util/error.h"
#include "ember/util/files.h"

namespace ember {
namespace fs = std::filesystem;

ShardSet::ShardSet(fs::path out, int64_t shard_tokens, int64_t vocab_size)
    : out_(std::move(out)),
      vocab_size_(vocab_size),
      discard_on_error_(out_),
      staging_(begin_staging(out_)),
      train_(staging_, "train", shard_tokens, vocab_size),
      val_(staging_, "val", shard_tokens, vocab_size) {}

void ShardSet::add(const std::vector<uint32_t>& ids, const std::string& where, bool val) {
  (val ? val_ : train_).add(ids, where);
}

PrepareSummary ShardSet::finish(const Description& d) {
  train_.flush();
  val_.flush();
  const bool train_only = d.val_fraction <= 0.0;  // --val-fraction 0: no val split, by request
  const bool empty_split = (train_.written().empty() && !d.eval_only) || (val_.written().empty() && !train_only);
  if (empty_split && d.part.is_null()) {
    const bool val_empty = val_.written().empty();
    throw DataError(fmt::format("prepare: the {} split is empty: {} document(s) went by name to {} with "
                                "--val-fraction {}; {}",
                                val_empty ? "val" : "train", d.documents, val_empty ? "train" : "val", d.val_fraction,
                                d.empty_split_hint));
  }
  std::vector<std::string> names = train_.written();
  names.insert(names.end(), val_.written().begin(), val_.written().end());
  publish_shards(out_, names);
  discard_on_error_.release();
  write_file_atomic(out_ / "train_token_counts.json", nlohmann::json(train_.counts()).dump() + "\n");
  nlohmann::json manifest = d.tokenizer;
  manifest.update({{"vocab_size", vocab_size_},
                   {"dtype", vocab_size_ <= 65536 ? "uint16" : "uint32"},
                   {"val_fraction", d.val_fraction},
                   {"train_tokens", train_.total()},
                   {"val_tokens", val_.total()},
                   {"train_shards", train_.written()},
                   {"val_shards", val_.written()},
                   {"token_counts", "train_token_counts.json"},
                   {"sources", d.sources}});
  if (!d.part.is_null()) manifest["part"] = d.part;
  write_file_atomic(out_ / "manifest.json", manifest.dump(2) + "\n");  // last: the prepare is complete
  PrepareSummary s{d.files, d.documents, train_.total(), val_.total(), {}};
  for (const auto& n : names) s.shards.push_back(out_ / n);
  return s;
}

}  // namespace ember
