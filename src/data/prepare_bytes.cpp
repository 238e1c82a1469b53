#include "ember/data/prepare_bytes.h"

#include <nlohmann/json.hpp>

#include "ember/data/byte_tokens.h"
#include "ember/data/document_source.h"
#include "ember/data/shard_writer.h"
#include "ember/util/error.h"
#include "ember/util/files.h"
#include "ember/util/sha256.h"

namespace ember {

PrepareSummary prepare_bytes(const BytePrepareOptions& opt) {
  const auto docs = list_documents(opt.inputs, opt.extensions, "prepare");
  const fs::path staging = begin_staging(opt.out_dir);
  ShardWriter train(staging, "train", opt.shard_tokens, kByteVocabSize);
  ShardWriter val(staging, "val", opt.shard_tokens, kByteVocabSize);
  nlohmann::json sources = nlohmann::json::array();
  for (const auto& doc : docs) {
    const std::string text = read_text_file(doc);
    const bool is_val = document_goes_to_val(doc.string(), opt.val_fraction);
    std::vector<uint32_t> ids = byte_tokens(text);
    ids.push_back(kByteDocumentSeparator);
    (is_val ? val : train).add(ids, doc.string());
    sources.push_back({{"path", doc.string()},
                       {"sha256", sha256_hex(text)},
                       {"bytes", text.size()},
                       {"tokens", ids.size()},
                       {"split", is_val ? "val" : "train"}});
  }
  train.flush();
  val.flush();
  if (train.written().empty() || val.written().empty())
    throw DataError("prepare: the split left train or val empty; use more documents or another --val-fraction");
  std::vector<std::string> names = train.written();
  names.insert(names.end(), val.written().begin(), val.written().end());
  publish_shards(opt.out_dir, names);
  write_file_atomic(opt.out_dir / "train_token_counts.json", nlohmann::json(train.counts()).dump() + "\n");
  nlohmann::json manifest = {{"tokenizer", "bytes"},
                             {"vocab_size", kByteVocabSize},
                             {"separator", kByteDocumentSeparator},
                             {"dtype", "uint16"},
                             {"val_fraction", opt.val_fraction},
                             {"train_tokens", train.total()},
                             {"val_tokens", val.total()},
                             {"train_shards", train.written()},
                             {"val_shards", val.written()},
                             {"token_counts", "train_token_counts.json"},
                             {"sources", sources}};
  write_file_atomic(opt.out_dir / "manifest.json", manifest.dump(2) + "\n");
  PrepareSummary s;
  s.documents = static_cast<int64_t>(docs.size());
  s.train_tokens = train.total();
  s.val_tokens = val.total();
  for (const auto& n : names) s.shards.push_back(opt.out_dir / n);
  return s;
}

}  // namespace ember
