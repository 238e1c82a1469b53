#include "ember/data/prepare_text.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "ember/data/document_source.h"
#include "ember/data/shard_set.h"
#include "ember/data/tokenizer.h"
#include "ember/data/tokenizer_presets.h"
#include "ember/util/error.h"
#include "ember/util/files.h"
#include "ember/util/log.h"
#include "ember/util/sha256.h"

namespace ember {
namespace {

constexpr size_t kBlockBytes = 4 << 20;   // text files are read and encoded in blocks of this size
constexpr size_t kBatchBytes = 16 << 20;  // bytes encoded in parallel before writing in order

// A piece of one document, in corpus order.
struct Unit {
  size_t source = 0;
  bool val = false, end_of_doc = false;
  std::string text;
  std::vector<uint32_t> ids;
};

bool ascii_space(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
bool ascii_visible(unsigned char c) { return c < 0x80 && !ascii_space(c); }
bool ascii_letter(unsigned char c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }

// The last place in text where GPT-style pre-tokenisation (r50k ... o200k, llama3, ember's trained
// ones) must start a piece: after a newline that an ASCII non-space follows (whitespace runs,
// "\s*[\r\n]+", end there), else before a single space between an ASCII non-space and an ASCII
// letter ("word| next"). npos when there is none; never inside a UTF-8 character.
size_t safe_cut(const std::string& text) {
  const auto at = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  if (text.size() < 3) return std::string::npos;
  for (size_t i = text.size() - 1; i > 0; --i)
    if (at(i - 1) == '\n' && ascii_visible(at(i))) return i;
  for (size_t i = text.size() - 1; i > 1; --i)
    if (at(i - 1) == ' ' && ascii_letter(at(i)) && ascii_visible(at(i - 2))) return i - 1;
  return std::string::npos;
}

// Reads the documents as units: text files in blocks cut at safe places, JSONL files line by line.
class UnitReader {
 public:
  UnitReader(const std::vector<fs::path>& docs, const TextPrepareOptions& opt) : docs_(docs), opt_(opt) {}

  bool next(Unit& u) {
    while (doc_ < docs_.size()) {
      if (!in_.is_open()) open_current();
      if (jsonl_ ? next_json_line(u) : next_block(u)) return true;
      in_.close();
      ++doc_;
    }
    return false;
  }
  int64_t bytes_read() const { return bytes_read_; }

 private:
  void open_current() {
    in_.open(docs_[doc_], std::ios::binary);
    if (!in_) throw DataError("prepare: cannot read '" + docs_[doc_].string() + "'");
    jsonl_ = docs_[doc_].extension() == ".jsonl";
    line_ = 0;
    carry_.clear();
    done_ = false;
  }
  // The document's next block, cut where no pre-tokeniser piece can span the cut, so that encoding
  // the blocks one by one gives the ids of the whole document; without such a place, more is read.
  bool next_block(Unit& u) {
    if (done_) return false;
    std::string text = std::move(carry_);
    carry_.clear();
    for (;;) {
      const size_t before = text.size();
      text.resize(before + kBlockBytes);
      in_.read(text.data() + before, static_cast<std::streamsize>(kBlockBytes));
      text.resize(before + static_cast<size_t>(in_.gcount()));
      if (in_.bad()) throw DataError("prepare: read error in '" + docs_[doc_].string() + "'");
      bytes_read_ += static_cast<int64_t>(text.size() - before);
      if (in_.eof()) {
        done_ = true;
        break;
      }
      if (const size_t cut = safe_cut(text); cut != std::string::npos) {
        carry_ = text.substr(cut);
        text.resize(cut);
        break;
      }
    }
    u = Unit{doc_, document_goes_to_val(docs_[doc_].string(), opt_.val_fraction), done_, std::move(text), {}};
    return true;
  }
  bool next_json_line(Unit& u) {
    std::string line;
    while (std::getline(in_, line)) {
      ++line_;
      bytes_read_ += static_cast<int64_t>(line.size()) + 1;
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      const std::string where = docs_[doc_].string() + ":" + std::to_string(line_);
      nlohmann::json j;
      try {
        j = nlohmann::json::parse(line);
      } catch (const nlohmann::json::exception& e) {
        throw DataError("prepare: " + where + ": invalid JSON (" + e.what() + ")");
      }
      if (!j.is_object() || !j.contains(opt_.jsonl_field) || !j[opt_.jsonl_field].is_string())
        throw DataError("prepare: " + where + ": expected a JSON object with a string field '" + opt_.jsonl_field +
                        "'");
      u = Unit{doc_, document_goes_to_val(where, opt_.val_fraction), true, j[opt_.jsonl_field].get<std::string>(), {}};
      return true;
    }
    if (in_.bad()) throw DataError("prepare: read error in '" + docs_[doc_].string() + "'");
    return false;
  }

  const std::vector<fs::path>& docs_;
  const TextPrepareOptions& opt_;
  size_t doc_ = 0;
  std::ifstream in_;
  bool jsonl_ = false, done_ = false;
  int64_t line_ = 0, bytes_read_ = 0;
  std::string carry_;
};

// Encodes units with `threads` workers taking the next unit from a shared counter.
void encode_batch(const Tokenizer& tok, std::vector<Unit>& batch, int threads) {
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
  const auto docs = list_documents(opt.inputs, opt.extensions, "prepare");
  int64_t total_bytes = 0;
  for (const auto& d : docs) total_bytes += static_cast<int64_t>(fs::file_size(d));
  ShardSet shards(opt.out_dir, opt.shard_tokens, tok.vocab_size());  // an interrupted run must not look complete
  std::vector<int64_t> source_tokens(docs.size(), 0);
  UnitReader reader(docs, opt);
  Progress progress(total_bytes, opt.progress);
  std::vector<Unit> batch;
  for (bool more = true; more;) {
    batch.clear();
    size_t bytes = 0;
    Unit u;
    while (bytes < kBatchBytes && (more = reader.next(u))) {
      bytes += u.text.size();
      batch.push_back(std::move(u));
    }
    encode_batch(tok, batch, std::max(1, opt.threads));
    for (auto& b : batch) {
      if (b.end_of_doc) b.ids.push_back(sep);
      shards.add(b.ids, docs[b.source].string(), b.val);
      source_tokens[b.source] += static_cast<int64_t>(b.ids.size());
    }
    progress.update(reader.bytes_read());
  }
  progress.update(reader.bytes_read(), true);
  nlohmann::json sources = nlohmann::json::array();
  for (size_t i = 0; i < docs.size(); ++i)
    sources.push_back({{"path", docs[i].string()},
                       {"sha256", sha256_file_hex(docs[i])},
                       {"bytes", fs::file_size(docs[i])},
                       {"tokens", source_tokens[i]}});
  ShardSet::Description d;
  d.tokenizer = {{"tokenizer", tok.name()},
                 {"tokenizer_spec", opt.tokenizer},
                 {"tokenizer_sha256", tok.hash()},
                 {"separator", sep}};
  if (!opt.corpus_name.empty()) d.tokenizer["corpus"] = opt.corpus_name;
  d.sources = std::move(sources);
  d.documents = static_cast<int64_t>(docs.size());
  d.val_fraction = opt.val_fraction;
  d.eval_only = opt.val_fraction >= 1.0;  // e.g. the out-of-distribution corpora
  d.empty_split_hint = "use more documents or another --val-fraction";
  return shards.finish(d);
}

}  // namespace ember
