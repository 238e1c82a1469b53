#include "ember/data/prepare_bytes.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ember/data/byte_tokens.h"
#include "ember/data/document_source.h"
#include "ember/data/shard_set.h"
#include "ember/util/error.h"
#include "ember/util/files.h"
#include "ember/util/sha256.h"

namespace ember {

namespace {

// One document has no other to go to validation: its last val_fraction goes there instead, cut
// after a newline (the first at or after the cut point, else the exact byte).
size_t single_document_cut(const std::string& text, double val_fraction) {
  const auto at = static_cast<size_t>(static_cast<double>(text.size()) * (1.0 - val_fraction));
  const size_t newline = text.find('\n', at);
  return newline != std::string::npos && newline + 1 < text.size() ? newline + 1 : at;
}

}  // namespace

PrepareSummary prepare_bytes(const BytePrepareOptions& opt) {
  const auto docs = list_documents(opt.inputs, opt.extensions, "prepare");
  ShardSet shards(opt.out_dir, opt.shard_tokens, kByteVocabSize);
  nlohmann::json sources = nlohmann::json::array();
  auto add = [&](const std::string& text, const std::string& where, bool is_val, nlohmann::json record) {
    std::vector<uint32_t> ids = byte_tokens(text);
    ids.push_back(kByteDocumentSeparator);
    shards.add(ids, where, is_val);
    record.update({{"sha256", sha256_hex(text)},
                   {"bytes", text.size()},
                   {"tokens", ids.size()},
                   {"split", is_val ? "val" : "train"}});
    sources.push_back(record);
  };
  const bool split_inside = docs.size() == 1 && opt.val_fraction > 0.0 && opt.val_fraction < 1.0;
  for (const auto& doc : docs) {
    const std::string text = read_text_file(doc);
    if (split_inside) {
      const size_t cut = single_document_cut(text, opt.val_fraction);
      add(text.substr(0, cut), doc.string(), false, {{"path", doc.string()}, {"from_byte", 0}});
      add(text.substr(cut), doc.string(), true, {{"path", doc.string()}, {"from_byte", cut}});
      continue;
    }
    add(text, doc.string(), document_goes_to_val(doc.string(), opt.val_fraction), {{"path", doc.string()}});
  }
  ShardSet::Description d;
  d.tokenizer = {{"tokenizer", "bytes"}, {"separator", kByteDocumentSeparator}};
  d.sources = std::move(sources);
  d.files = d.documents = static_cast<int64_t>(docs.size());
  d.val_fraction = opt.val_fraction;
  d.empty_split_hint = "documents are assigned whole (a single one is cut), so use more of them or another --val-fraction";
  return shards.finish(d);
}

}  // namespace ember
