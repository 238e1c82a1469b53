// A corpus's documents as units to encode: plain text files in blocks cut where no pre-tokeniser
// piece can span the cut (so the blocks' ids are the whole document's), and one unit per record
// of JSONL (one object per line) and Parquet (one row) files. Text and JSONL may be compressed
// (data/byte_stream.h). Each document goes to the train or val split by a hash of its key: its
// path for a text file, path:line for JSONL, path:row for Parquet (1-based).
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace ember {

// A piece of one document, in corpus order.
struct TextUnit {
  size_t source = 0;  // index into the document list
  bool val = false, end_of_doc = false;
  std::string text;
  std::vector<uint32_t> ids;  // filled by the encoder
};

struct TextUnitOptions {
  double val_fraction = 0.05;
  std::string jsonl_field = "text";   // the field of each JSONL object that holds the text
  std::string text_column = "text";   // the Parquet column that holds the text
};

// The last place in text where GPT-style pre-tokenisation (r50k ... o200k, llama3, ember's trained
// ones) must start a piece, so that encoding the text before and after it gives the whole text's
// ids: after a newline between an ASCII letter or digit and an ASCII non-space ("word\n|Next": a
// blank line, "\n\n", is one piece at the end of a block for the GPT-2 pattern and two in the
// document; ".\n/" is one piece of o200k), else before a single space between an ASCII non-space
// and an ASCII letter ("word| next"). npos when there is none; never inside a UTF-8 character.
// from: only the places whose three bytes end at or after text[from] are looked at, so a reader that
// found none in text[0, from) scans each byte it appends once, not the whole text after every read.
size_t safe_text_cut(const std::string& text, size_t from = 0);

enum class DocumentFormat { text, jsonl, parquet };
// By the name without its compression suffix: .jsonl, .parquet, anything else is text. A
// compressed Parquet file (its pages are compressed inside) is a DataError naming it.
DocumentFormat document_format(const std::filesystem::path& path);

class TextUnitReader {
 public:
  TextUnitReader(const std::vector<std::filesystem::path>& docs, TextUnitOptions opt);
  ~TextUnitReader();
  bool next(TextUnit& u);  // false after the last document
  int64_t file_bytes_read() const;  // of the files, as stored (compressed), for progress

 private:
  struct Source;
  void open_current();
  bool next_block(TextUnit& u);
  bool next_json_line(TextUnit& u);
  bool next_parquet_row(TextUnit& u);

  const std::vector<std::filesystem::path>& docs_;
  TextUnitOptions opt_;
  size_t doc_ = 0;
  int64_t finished_bytes_ = 0;  // the files before the current one
  std::unique_ptr<Source> src_;
};

}  // namespace ember
