#include "ember/data/prepare_text.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "ember/data/document_source.h"
#include "ember/data/prepare_parts.h"
#include "ember/data/shard_set.h"
#include "ember/data/tokenizer.h"
#include "ember/data/text_units.h"
#include "ember/data/tokenizer_presets.h"
#include "ember/util/error.h"
#include "ember/util/files.h"
#include "ember/util/log.h"
#include "ember/util/sha256.h"

namespace ember {
namespace {

constexpr size_t kBatchBytes = 16 << 20;  // bytes encoded in parallel before writing in order

// Encodes units with `threads` workers taking the next unit from a shared counter.
void encode_batch(const Tokenizer& tok, std::vector<TextUnit>& batch, int threads) {
  std::atomic<size_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto work = [&] {
    try {
      for (size_t i; (i = next++) < batch.size();) tok.encode_append(batch[i].text, batch[i].ids);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      error = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& th : pool) th.join();
  if (error) std::rethrow_exception(error);
}

class Progress {
 public:
  Progress(int64_t total, bool on) : total_(total), on_(on), start_(Clock::now()), last_(start_) {}
  void update(int64_t done, bool final = false) {
    const auto now = Clock::now();
    if (!on_ || (!final && now - last_ < std::chrono::seconds(1))) return;
    last_ = now;
    const double s = std::chrono::duration<double>(now - start_).count();
    const double frac = total_ > 0 ? double(done) / double(total_) : 1.0;
    const int bar = static_cast<int>(frac * 30);
    std::fprintf(stderr, "\rprepare [%-30s] %5.1f%%  %.1f / %.1f MB  %.1f MB/s%s", std::string(bar, '#').c_str(),
                 100 * frac, done / 1e6, total_ / 1e6, done / 1e6 / std::max(s, 1e-9), final ? "\n" : "");
    std::fflush(stderr);
  }

 private:
  using Clock = std::chrono::steady_clock;
  int64_t total_;
  bool on_;
  Clock::time_point start_, last_;
};

}  // namespace

PrepareSummary prepare_text(const TextPrepareOptions& opt) {
  const Tokenizer tok(resolve_tokenizer(opt.tokenizer));
  uint32_t sep = 0;
  if (!tok.document_separator(sep))
    throw DataError("prepare: tokenizer '" + tok.name() + "' has no <|endoftext|> or <|end_of_text|> token");
  const auto listed = list_documents(opt.inputs, opt.extensions, "prepare");
  std::vector<uint64_t> sizes;
  for (const auto& d : listed) sizes.push_back(fs::file_size(d));
  const auto [begin, end] = part_documents(sizes, opt.part);
  const std::vector<fs::path> docs(listed.begin() + static_cast<std::ptrdiff_t>(begin),
                                   listed.begin() + static_cast<std::ptrdiff_t>(end));
  int64_t total_bytes = 0;
  for (size_t i = begin; i < end; ++i) total_bytes += static_cast<int64_t>(sizes[i]);
  ShardSet shards(opt.out_dir, opt.shard_tokens, tok.vocab_size());  // an interrupted run must not look complete
  std::vector<int64_t> source_tokens(docs.size(), 0);
  TextUnitReader reader(docs, {opt.val_fraction, opt.jsonl_field, opt.text_column});
  Progress progress(total_bytes, opt.progress);
  std::vector<TextUnit> batch;
  int64_t documents = 0;  // a file, a JSONL line or a Parquet row: each ends in one unit
  for (bool more = true; more;) {
    batch.clear();
    size_t bytes = 0;
    TextUnit u;
    while (bytes < kBatchBytes && (more = reader.next(u))) {
      bytes += u.text.size();
      batch.push_back(std::move(u));
    }
    encode_batch(tok, batch, std::max(1, opt.threads));
    for (auto& b : batch) {
      if (b.end_of_doc) b.ids.push_back(sep), ++documents;
      shards.add(b.ids, docs[b.source].string(), b.val);
      source_tokens[b.source] += static_cast<int64_t>(b.ids.size());
    }
    progress.update(reader.file_bytes_read());
  }
  progress.update(reader.file_bytes_read(), true);
  nlohmann::json sources = nlohmann::json::array();
  for (size_t i = 0; i < docs.size(); ++i)
    sources.push_back({{"path", docs[i].string()},
                       {"sha256", sha256_file_hex(docs[i])},
                       {"bytes", sizes[begin + i]},
                       {"tokens", source_tokens[i]}});
  ShardSet::Description d;
  d.tokenizer = {{"tokenizer", tok.name()},
                 {"tokenizer_spec", opt.tokenizer},
                 {"tokenizer_sha256", tok.hash()},
                 {"separator", sep}};
  if (!opt.corpus_name.empty()) d.tokenizer["corpus"] = opt.corpus_name;
  d.sources = std::move(sources);
  d.files = static_cast<int64_t>(docs.size());
  d.documents = documents;
  d.val_fraction = opt.val_fraction;
  d.eval_only = opt.val_fraction >= 1.0;  // e.g. the out-of-distribution corpora
  d.empty_split_hint = "use more documents or another --val-fraction";
  if (!opt.part.whole())
    d.part = {{"index", opt.part.index},
              {"count", opt.part.count},
              {"documents", docs.size()},
              {"inputs_sha256", document_list_sha256(listed, sizes)},
              {"shard_tokens", opt.shard_tokens}};
  return shards.finish(d);
}

}  // namespace ember
