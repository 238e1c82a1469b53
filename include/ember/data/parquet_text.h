// The documents of a Parquet file (FineWeb, FineWeb-Edu, most of the Hugging Face hub): the values
// of one string column, read one row group at a time through Apache Arrow's Parquet reader, so
// memory holds one row group's column, never the file.
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

namespace ember {

class ParquetTextReader {
 public:
  // DataError naming the file: not Parquet (or truncated: no footer), no column `column` (the error
  // lists the columns there), a column of another type than strings, or a build without Arrow.
  ParquetTextReader(const std::filesystem::path& path, const std::string& column);
  ~ParquetTextReader();
  ParquetTextReader(const ParquetTextReader&) = delete;
  ParquetTextReader& operator=(const ParquetTextReader&) = delete;

  // The next row's text and its row number (1-based, in the file); null values are skipped.
  // False at the end.
  bool next(std::string& text, int64_t& row);
  // The file's bytes read so far, in proportion to the rows read, for progress.
  int64_t file_bytes_read() const;
  int64_t null_rows() const;  // null values skipped so far

 private:
  struct Impl;
  void open(const std::filesystem::path& path, const std::string& column);
  bool next_value(std::string& text, int64_t& row);
  std::unique_ptr<Impl> impl_;
};

// Whether this build reads Parquet (it was configured with pyarrow's Arrow beside torch).
bool parquet_supported();

}  // namespace ember
