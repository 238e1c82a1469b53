#include "ember/data/parquet_text.h"

#include <exception>
#include <vector>

#include "ember/util/error.h"

#ifdef EMBER_HAVE_ARROW
#include <arrow/array.h>
#include <arrow/io/file.h>
#include <arrow/table.h>
#include <parquet/arrow/reader.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>
#include <parquet/schema.h>
#endif

namespace ember {
namespace fs = std::filesystem;

#ifdef EMBER_HAVE_ARROW
namespace {

std::string quoted(const fs::path& p) { return "'" + p.string() + "'"; }

template <typename T>
T ok_or_throw(arrow::Result<T> r, const fs::path& path, const std::string& doing) {
  if (!r.ok()) throw DataError("prepare: " + quoted(path) + ": " + doing + ": " + r.status().message());
  return std::move(r).ValueOrDie();
}

std::string column_names(const parquet::SchemaDescriptor& schema) {
  std::string names;
  for (int i = 0; i < schema.num_columns(); ++i) names += (i ? ", " : "") + schema.Column(i)->path()->ToDotString();
  return names;
}

}  // namespace

struct ParquetTextReader::Impl {
  fs::path path;
  std::string column_name;
  std::unique_ptr<parquet::arrow::FileReader> reader;
  int column = -1, row_groups = 0, next_group = 0;
  int64_t rows = 0, file_bytes = 0, row = 0, nulls = 0;
  std::shared_ptr<arrow::ChunkedArray> values;  // the current row group's column
  int chunk = 0;
  int64_t at = 0;  // next value in values->chunk(chunk)

  bool load_next_group() {
    if (next_group == row_groups) return false;
    const auto table = ok_or_throw(reader->ReadRowGroup(next_group, {column}), path,
                                   "reading row group " + std::to_string(next_group + 1));
    ++next_group;
    values = table->column(0);
    chunk = 0;
    at = 0;
    return true;
  }
  // The value at (chunk, at), whatever the string type; false for a null.
  bool value(std::string& text) const {
    const auto& a = *values->chunk(chunk);
    if (a.IsNull(at)) return false;
    switch (a.type_id()) {
      case arrow::Type::STRING: text = static_cast<const arrow::StringArray&>(a).GetString(at); break;
      case arrow::Type::LARGE_STRING: text = static_cast<const arrow::LargeStringArray&>(a).GetString(at); break;
      case arrow::Type::STRING_VIEW: text = static_cast<const arrow::StringViewArray&>(a).GetString(at); break;
      default: throw DataError("prepare: " + quoted(path) + ": column '" + column_name + "' holds " + a.type()->ToString() +
                               ", not strings; name the text column with --text-column");
    }
    return true;
  }
};

// Arrow reports through Status, but some of its paths throw (parquet::ParquetException): either
// way a DataError naming the file.
template <class Body>
auto naming_the_file(const fs::path& path, Body&& body) {
  try {
    return body();
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw DataError("prepare: " + quoted(path) + ": not a readable Parquet file: " + e.what());
  }
}

ParquetTextReader::ParquetTextReader(const fs::path& path, const std::string& column) : impl_(std::make_unique<Impl>()) {
  naming_the_file(path, [&] { open(path, column); });
}

void ParquetTextReader::open(const fs::path& path, const std::string& column) {
  auto& m = *impl_;
  m.path = path;
  m.column_name = column;
  const auto file = ok_or_throw(arrow::io::ReadableFile::Open(path.string()), path, "cannot open");
  m.file_bytes = ok_or_throw(file->GetSize(), path, "cannot read its size");
  m.reader = ok_or_throw(parquet::arrow::OpenFile(file, arrow::default_memory_pool()), path, "not a Parquet file");
  const auto metadata = m.reader->parquet_reader()->metadata();
  const auto& schema = *metadata->schema();
  m.column = schema.ColumnIndex(column);
  if (m.column < 0)
    throw DataError("prepare: " + quoted(path) + " has no column '" + column + "' (it has: " + column_names(schema) +
                    "); name the text column with --text-column");
  m.row_groups = metadata->num_row_groups();
  m.rows = metadata->num_rows();
}

ParquetTextReader::~ParquetTextReader() = default;

bool ParquetTextReader::next(std::string& text, int64_t& row) {
  return naming_the_file(impl_->path, [&] { return next_value(text, row); });
}

bool ParquetTextReader::next_value(std::string& text, int64_t& row) {
  auto& m = *impl_;
  for (;;) {
    while (!m.values || m.chunk == m.values->num_chunks()) {
      if (!m.load_next_group()) return false;
    }
    if (m.at == m.values->chunk(m.chunk)->length()) {
      ++m.chunk;
      m.at = 0;
      continue;
    }
    const bool present = m.value(text);
    ++m.at;
    row = ++m.row;
    if (present) return true;
    ++m.nulls;
  }
}

int64_t ParquetTextReader::file_bytes_read() const {
  const auto& m = *impl_;
  return m.rows > 0 ? static_cast<int64_t>(static_cast<double>(m.file_bytes) * m.row / m.rows) : m.file_bytes;
}

int64_t ParquetTextReader::null_rows() const { return impl_->nulls; }

bool parquet_supported() { return true; }

#else  // built without pyarrow's Arrow

struct ParquetTextReader::Impl {};
void ParquetTextReader::open(const fs::path&, const std::string&) {}
bool ParquetTextReader::next_value(std::string&, int64_t&) { return false; }

ParquetTextReader::ParquetTextReader(const fs::path& path, const std::string&) {
  throw DataError("prepare: '" + path.string() +
                  "' is Parquet, which this ember was built without: install pyarrow beside torch "
                  "(pip install -r scripts/requirements.txt; scripts/setup.sh does) and reconfigure");
}
ParquetTextReader::~ParquetTextReader() = default;
bool ParquetTextReader::next(std::string&, int64_t&) { return false; }
int64_t ParquetTextReader::file_bytes_read() const { return 0; }
int64_t ParquetTextReader::null_rows() const { return 0; }
bool parquet_supported() { return false; }

#endif

}  // namespace ember
