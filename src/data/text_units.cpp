#include "ember/data/text_units.h"

#include <nlohmann/json.hpp>

#include <algorithm>

#include "ember/data/byte_stream.h"
#include "ember/data/document_source.h"
#include "ember/data/parquet_text.h"
#include "ember/util/error.h"
#include "ember/util/log.h"

namespace ember {
namespace fs = std::filesystem;
namespace {

constexpr size_t kBlockBytes = 4 << 20;  // text files are read and encoded in blocks of this size

bool ascii_space(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
bool ascii_visible(unsigned char c) { return c < 0x80 && !ascii_space(c); }
bool ascii_letter(unsigned char c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }
bool ascii_alnum(unsigned char c) { return ascii_letter(c) || (c >= '0' && c <= '9'); }

}  // namespace

size_t safe_text_cut(const std::string& text, size_t from) {
  const auto at = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const size_t low = std::max<size_t>(from, 2);  // i: the last of the three bytes looked at
  for (size_t i = text.size(); i-- > low;)
    if (at(i - 1) == '\n' && ascii_visible(at(i)) && ascii_alnum(at(i - 2))) return i;
  for (size_t i = text.size(); i-- > low;)
    if (at(i - 1) == ' ' && ascii_letter(at(i)) && ascii_visible(at(i - 2))) return i - 1;
  return std::string::npos;
}

DocumentFormat document_format(const fs::path& path) {
  const std::string ext = without_compression_suffix(path).extension().string();
  if (ext == ".parquet") {
    if (without_compression_suffix(path) != path)
      throw DataError("prepare: '" + path.string() + "': a Parquet file is compressed inside; decompress it first");
    return DocumentFormat::parquet;
  }
  return ext == ".jsonl" ? DocumentFormat::jsonl : DocumentFormat::text;
}

// The open document: a byte stream (text, JSONL) or a Parquet reader.
struct TextUnitReader::Source {
  DocumentFormat format = DocumentFormat::text;
  std::unique_ptr<ByteStream> bytes;
  std::unique_ptr<ParquetTextReader> parquet;
  std::string pending;  // bytes read but not yet used from `used` on (the rest of a block, JSONL lines)
  size_t used = 0;
  bool ended = false;   // the stream is at its end (`pending` may still hold bytes)
  int64_t line = 0;

  int64_t file_bytes_read() const { return parquet ? parquet->file_bytes_read() : bytes->file_bytes_read(); }
  // Appends up to kBlockBytes to `pending`; false at the stream's end.
  bool read_more() {
    pending.erase(0, used);
    used = 0;
    const size_t before = pending.size();
    pending.resize(before + kBlockBytes);
    const size_t got = bytes->read(pending.data() + before, kBlockBytes);
    pending.resize(before + got);
    ended = got == 0;
    return !ended;
  }
};

TextUnitReader::TextUnitReader(const std::vector<fs::path>& docs, TextUnitOptions opt)
    : docs_(docs), opt_(std::move(opt)) {}

TextUnitReader::~TextUnitReader() = default;

bool TextUnitReader::next(TextUnit& u) {
  while (doc_ < docs_.size()) {
    if (!src_) open_current();
    const bool got = src_->format == DocumentFormat::jsonl     ? next_json_line(u)
                     : src_->format == DocumentFormat::parquet ? next_parquet_row(u)
                                                               : next_block(u);
    if (got) return true;
    if (src_->parquet && src_->parquet->null_rows() > 0)
      log::warn("prepare: {}: {} row(s) with a null '{}' skipped", docs_[doc_].string(), src_->parquet->null_rows(),
                opt_.text_column);
    finished_bytes_ += static_cast<int64_t>(fs::file_size(docs_[doc_]));
    src_.reset();
    ++doc_;
  }
  return false;
}

int64_t TextUnitReader::file_bytes_read() const { return finished_bytes_ + (src_ ? src_->file_bytes_read() : 0); }

void TextUnitReader::open_current() {
  src_ = std::make_unique<Source>();
  src_->format = document_format(docs_[doc_]);
  if (src_->format == DocumentFormat::parquet)
    src_->parquet = std::make_unique<ParquetTextReader>(docs_[doc_], opt_.text_column);
  else
    src_->bytes = open_byte_stream(docs_[doc_]);
}

// The document's next block, cut where no pre-tokeniser piece can span the cut, so that encoding
// the blocks one by one gives the ids of the whole document; without such a place, more is read.
bool TextUnitReader::next_block(TextUnit& u) {
  auto& s = *src_;
  if (s.ended && s.pending.empty()) return false;
  size_t cut = std::string::npos, scanned = 0;  // pending[0, scanned) holds no cut: each byte scanned once
  while (!s.ended && (cut = safe_text_cut(s.pending, scanned)) == std::string::npos) {
    scanned = s.pending.size();
    s.read_more();
  }
  if (!s.ended && s.pending.size() < kBlockBytes) {  // a cut was found early: fill up the block first
    while (!s.ended && s.pending.size() < kBlockBytes) s.read_more();
    cut = s.ended ? std::string::npos : safe_text_cut(s.pending);
  }
  std::string text;
  if (s.ended || cut == std::string::npos) {
    text = std::move(s.pending);
    s.pending.clear();
    s.ended = true;
  } else {
    text = s.pending.substr(0, cut);
    s.pending.erase(0, cut);
  }
  u = TextUnit{doc_, document_goes_to_val(docs_[doc_].string(), opt_.val_fraction), s.ended, std::move(text), {}};
  return true;
}

bool TextUnitReader::next_json_line(TextUnit& u) {
  auto& s = *src_;
  for (;;) {
    size_t end = s.pending.find('\n', s.used);
    while (end == std::string::npos && !s.ended) {
      const size_t searched = s.pending.size() - s.used;
      s.read_more();
      end = s.pending.find('\n', searched);
    }
    if (end == std::string::npos && s.used == s.pending.size()) return false;
    if (end == std::string::npos) end = s.pending.size();  // a last line without a newline
    const std::string line = s.pending.substr(s.used, end - s.used);
    s.used = std::min(end + 1, s.pending.size());
    ++s.line;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = docs_[doc_].string() + ":" + std::to_string(s.line);
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& e) {
      throw DataError("prepare: " + where + ": invalid JSON (" + e.what() + ")");
    }
    if (!j.is_object() || !j.contains(opt_.jsonl_field) || !j[opt_.jsonl_field].is_string())
      throw DataError("prepare: " + where + ": expected a JSON object with a string field '" + opt_.jsonl_field + "'");
    u = TextUnit{doc_, document_goes_to_val(where, opt_.val_fraction), true, j[opt_.jsonl_field].get<std::string>(), {}};
    return true;
  }
}

bool TextUnitReader::next_parquet_row(TextUnit& u) {
  std::string text;
  int64_t row = 0;
  if (!src_->parquet->next(text, row)) return false;
  const std::string key = docs_[doc_].string() + ":" + std::to_string(row);
  u = TextUnit{doc_, document_goes_to_val(key, opt_.val_fraction), true, std::move(text), {}};
  return true;
}

}  // namespace ember
