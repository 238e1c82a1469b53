// NumPy .npy files (format versions 1-3): the header, and whole arrays (little-endian fp16 / fp32
// / fp64 / integer, C or Fortran order): enough to read what numpy.save wrote. Token shards
// (data/shard.cpp) memory-map .npy files through the same header parser.
#pragma once
#include <ATen/ATen.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace ember {

struct NpyHeader {
  std::string descr;  // the dtype string, e.g. "<f4", "<u2", "|u1"
  bool fortran_order = false;
  std::vector<int64_t> shape;
  size_t data_offset = 0;  // where the array starts, from the beginning of the file
};

// Bytes of a .npy file's preamble (magic, version, header length), enough for npy_header_size.
constexpr size_t kNpyPreamble = 12;
// The longest header dict read (numpy.load's default max_header_size).
constexpr size_t kNpyMaxHeader = 10000;
// The total size of the preamble plus the header dict, from the first kNpyPreamble bytes.
size_t npy_header_size(const uint8_t* preamble, size_t size, const std::string& where);
// Parses the header at the start of `bytes` (at least npy_header_size bytes). Throws DataError
// naming `where` on a bad magic, a truncated header or a missing key.
NpyHeader parse_npy_header(const uint8_t* bytes, size_t size, const std::string& where);

// Throws DataError naming the file on a bad magic, an unsupported dtype (big-endian, objects,
// structured), or a file shorter than its header says (truncated).
at::Tensor load_npy(const std::filesystem::path& path);

// Writes t (any device; one of the dtypes load_npy reads) as a version-1 .npy file that
// numpy.load reads, atomically. Throws DataError naming the path for another dtype.
void save_npy(const std::filesystem::path& path, const at::Tensor& t);

}  // namespace ember
