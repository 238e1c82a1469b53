#include "ember/data/prepare_bytes.h"

#include "ember/util/log.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "ember/data/shard.h"
#include "ember/util/error.h"
#include "ember/util/files.h"
#include "ember/util/sha256.h"

namespace ember {
namespace {

std::vector<fs::path> list_documents(const BytePrepareOptions& opt) {
  std::vector<fs::path> docs;
  for (const auto& in : opt.inputs) {
    if (fs::is_regular_file(in)) {
      docs.emplace_back(in);
    } else if (fs::is_directory(in)) {
      for (const auto& e : fs::recursive_directory_iterator(in))
        if (e.is_regular_file() && std::count(opt.extensions.begin(), opt.extensions.end(),
                                              e.path().extension().string()))
          docs.push_back(e.path());
    } else {
      throw DataError("prepare: input '" + in + "' does not exist");
    }
  }
  std::sort(docs.begin(), docs.end());
  if (docs.empty()) throw DataError("prepare: no input documents found");
  return docs;
}

bool goes_to_val(const fs::path& doc, double val_fraction) {
  const std::string h = sha256_hex(doc.string()).substr(0, 8);
  return static_cast<double>(std::stoul(h, nullptr, 16)) / 4294967296.0 < val_fraction;
}

class ShardWriter {
 public:
  ShardWriter(fs::path dir, std::string split, int64_t max_tokens)
      : dir_(std::move(dir)), split_(std::move(split)), max_(max_tokens) {}
  void add(const std::string& text) {
    for (unsigned char c : text) tokens_.push_back(c == 0 ? ' ' : c);
    tokens_.push_back(0);  // document separator
    total_ += static_cast<int64_t>(text.size()) + 1;
    if (static_cast<int64_t>(tokens_.size()) >= max_) flush();
  }
  void flush() {
    if (tokens_.empty()) return;
    auto path = dir_ / fmt::format("{}_{:05d}.bin", split_, written_.size());
    write_shard(path, tokens_);
    written_.push_back(path);
    tokens_.clear();
  }
  int64_t total() const { return total_; }
  const std::vector<fs::path>& written() const { return written_; }

 private:
  fs::path dir_;
  std::string split_;
  int64_t max_, total_ = 0;
  std::vector<uint32_t> tokens_;
  std::vector<fs::path> written_;
};

}  // namespace

PrepareSummary prepare_bytes(const BytePrepareOptions& opt) {
  const auto docs = list_documents(opt);
  fs::create_directories(opt.out_dir);
  ShardWriter train(opt.out_dir, "train", opt.shard_tokens), val(opt.out_dir, "val", opt.shard_tokens);
  nlohmann::json sources = nlohmann::json::array();
  for (const auto& doc : docs) {
    const std::string text = read_text_file(doc);
    const bool is_val = goes_to_val(doc, opt.val_fraction);
    (is_val ? val : train).add(text);
    sources.push_back({{"path", doc.string()}, {"sha256", sha256_hex(text)}, {"bytes", text.size()},
                       {"split", is_val ? "val" : "train"}});
  }
  train.flush();
  val.flush();
  if (train.written().empty() || val.written().empty())
    throw DataError("prepare: the split left train or val empty; use more documents or another --val-fraction");
  nlohmann::json manifest = {{"tokenizer", "bytes"}, {"vocab_size", 256}, {"separator", 0},
                             {"train_tokens", train.total()}, {"val_tokens", val.total()},
                             {"sources", sources}};
  write_file_atomic(opt.out_dir / "manifest.json", manifest.dump(2) + "\n");
  PrepareSummary s;
  s.documents = static_cast<int64_t>(docs.size());
  s.train_tokens = train.total();
  s.val_tokens = val.total();
  s.shards = train.written();
  s.shards.insert(s.shards.end(), val.written().begin(), val.written().end());
  return s;
}

}  // namespace ember
