// A file's bytes as they were before compression: plain files, gzip (`.gz`, zlib; concatenated
// members too) and Zstandard (`.zst`, libzstd; several frames too), chosen by the name's last
// extension. Corpora are published this way (SlimPajama, the Pile, Dolma: `.jsonl.zst`/`.jsonl.gz`).
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

namespace ember {

class ByteStream {
 public:
  virtual ~ByteStream() = default;
  // Up to `n` bytes into `buf`; 0 at the end. A DataError naming the file for a read error and for
  // data that is corrupt or ends early (a truncated download).
  virtual size_t read(char* buf, size_t n) = 0;
  // Bytes of the file itself consumed so far (compressed), for progress.
  virtual int64_t file_bytes_read() const = 0;
};

// DataError naming the file when it cannot be opened, or when this build lacks the library.
std::unique_ptr<ByteStream> open_byte_stream(const std::filesystem::path& path);

// "a.jsonl.gz" -> "a.jsonl"; names without `.gz`/`.zst` unchanged. The format of a file is the
// extension of this name.
std::filesystem::path without_compression_suffix(const std::filesystem::path& path);

}  // namespace ember
