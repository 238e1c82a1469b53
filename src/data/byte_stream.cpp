#include "ember/data/byte_stream.h"

#include <cstdio>
#include <vector>

#include "ember/util/error.h"

#ifdef EMBER_HAVE_ZLIB
#include <zlib.h>
#endif
#ifdef EMBER_HAVE_ZSTD
#include <zstd.h>
#endif

namespace ember {
namespace fs = std::filesystem;
namespace {

constexpr size_t kChunkBytes = 1 << 20;  // compressed bytes read from the file at a time

std::string quoted(const fs::path& p) { return "'" + p.string() + "'"; }

// The file's raw bytes in chunks, for the plain stream and the decoders.
class FileChunks {
 public:
  explicit FileChunks(const fs::path& path) : path_(path), file_(std::fopen(path.c_str(), "rb")) {
    if (!file_) throw DataError("prepare: cannot read " + quoted(path));
  }
  ~FileChunks() { std::fclose(file_); }
  FileChunks(const FileChunks&) = delete;
  FileChunks& operator=(const FileChunks&) = delete;

  size_t read(char* buf, size_t n) {
    const size_t got = std::fread(buf, 1, n, file_);
    if (std::ferror(file_)) throw DataError("prepare: read error in " + quoted(path_));
    consumed_ += static_cast<int64_t>(got);
    return got;
  }
  int64_t consumed() const { return consumed_; }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
  std::FILE* file_;
  int64_t consumed_ = 0;
};

class PlainStream final : public ByteStream {
 public:
  explicit PlainStream(const fs::path& path) : file_(path) {}
  size_t read(char* buf, size_t n) override { return file_.read(buf, n); }
  int64_t file_bytes_read() const override { return file_.consumed(); }

 private:
  FileChunks file_;
};

// The compressed input a decoder works through: a chunk of the file and how much of it is used.
struct InputChunk {
  std::vector<char> bytes = std::vector<char>(kChunkBytes);
  size_t size = 0, used = 0;
  bool file_ended = false;
  // Whether there is input to decode, reading the next chunk when this one is used up. At the end
  // of the file: false, or a DataError when the decoder is inside a `unit` (a truncated file).
  bool ready(FileChunks& file, bool inside_unit, const char* unit) {
    if (used < size) return true;
    if (!file_ended) {
      size = file.read(bytes.data(), bytes.size());
      used = 0;
      file_ended = size == 0;
    }
    if (file_ended && inside_unit)
      throw DataError("prepare: " + quoted(file.path()) + " ends inside " + unit + " (truncated?)");
    if (file_ended && file.consumed() == 0)
      throw DataError("prepare: " + quoted(file.path()) + " is empty, where " + unit + " should start (truncated?)");
    return !file_ended;
  }
};

#ifdef EMBER_HAVE_ZLIB
// RFC 1952 members, one after another (gzip -c a b > ab.gz is one stream of both).
class GzipStream final : public ByteStream {
 public:
  explicit GzipStream(const fs::path& path) : file_(path) {
    if (inflateInit2(&z_, 16 + MAX_WBITS) != Z_OK) throw DataError("prepare: zlib could not start on " + quoted(path));
  }
  ~GzipStream() override { inflateEnd(&z_); }
  size_t read(char* buf, size_t n) override {
    size_t out = 0;
    while (out < n) {
      if (!in_.ready(file_, in_member_, "a gzip member")) break;
      if (!in_member_) {  // a new member starts here
        inflateReset(&z_);
        in_member_ = true;
      }
      z_.next_in = reinterpret_cast<Bytef*>(in_.bytes.data() + in_.used);
      z_.avail_in = static_cast<uInt>(in_.size - in_.used);
      z_.next_out = reinterpret_cast<Bytef*>(buf + out);
      z_.avail_out = static_cast<uInt>(n - out);
      const int rc = inflate(&z_, Z_NO_FLUSH);
      in_.used = in_.size - z_.avail_in;
      out = n - z_.avail_out;
      if (rc == Z_STREAM_END) {
        in_member_ = false;
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        throw DataError("prepare: " + quoted(file_.path()) + " is not valid gzip data (" +
                        (z_.msg ? z_.msg : "zlib error " + std::to_string(rc)) + ")");
      }
    }
    return out;
  }
  int64_t file_bytes_read() const override { return file_.consumed(); }

 private:
  FileChunks file_;
  InputChunk in_;
  z_stream z_{};
  bool in_member_ = false;
};
#endif

#ifdef EMBER_HAVE_ZSTD
// Zstandard frames, one after another.
class ZstdStream final : public ByteStream {
 public:
  explicit ZstdStream(const fs::path& path) : file_(path), z_(ZSTD_createDStream()) {
    if (!z_) throw DataError("prepare: libzstd could not start on " + quoted(path));
  }
  ~ZstdStream() override { ZSTD_freeDStream(z_); }
  size_t read(char* buf, size_t n) override {
    ZSTD_outBuffer out{buf, n, 0};
    while (out.pos < n) {
      if (!in_.ready(file_, in_frame_, "a zstd frame")) break;
      ZSTD_inBuffer in{in_.bytes.data(), in_.size, in_.used};
      const size_t rc = ZSTD_decompressStream(z_, &out, &in);
      in_.used = in.pos;
      if (ZSTD_isError(rc))
        throw DataError("prepare: " + quoted(file_.path()) + " is not valid zstd data (" + ZSTD_getErrorName(rc) + ")");
      in_frame_ = rc != 0;  // 0: a frame is complete and flushed
    }
    return out.pos;
  }
  int64_t file_bytes_read() const override { return file_.consumed(); }

 private:
  FileChunks file_;
  InputChunk in_;
  ZSTD_DStream* z_;
  bool in_frame_ = false;
};
#endif

[[noreturn, maybe_unused]] void missing_library(const fs::path& path, const std::string& library, const std::string& package) {
  throw DataError("prepare: " + quoted(path) + " needs " + library + ", which this ember was built without: install " +
                  package + " (scripts/setup.sh does) and rebuild");
}

}  // namespace

std::unique_ptr<ByteStream> open_byte_stream(const fs::path& path) {
  const std::string ext = path.extension().string();
  if (ext == ".gz") {
#ifdef EMBER_HAVE_ZLIB
    return std::make_unique<GzipStream>(path);
#else
    missing_library(path, "zlib", "zlib1g-dev");
#endif
  }
  if (ext == ".zst") {
#ifdef EMBER_HAVE_ZSTD
    return std::make_unique<ZstdStream>(path);
#else
    missing_library(path, "libzstd", "libzstd-dev");
#endif
  }
  return std::make_unique<PlainStream>(path);
}

fs::path without_compression_suffix(const fs::path& path) {
  const std::string ext = path.extension().string();
  return ext == ".gz" || ext == ".zst" ? fs::path(path).replace_extension() : path;
}

}  // namespace ember
