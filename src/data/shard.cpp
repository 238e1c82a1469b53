#include "ember/data/shard.h"

#include <fcntl.h>
#include <glob.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>

#include "ember/util/error.h"
#include "ember/util/files.h"

namespace ember {

namespace {

constexpr const char* kNanoGptPrefix = "nanogpt:";

// A .npy header: "\x93NUMPY", version, header length, then a Python dict literal such as
// {'descr': '<u2', 'fortran_order': False, 'shape': (1000,), }. Returns the data offset and sets
// bytes per token and count; throws DataError naming the file for anything but a 1-D u2/u4/i4 array.
size_t parse_npy_header(const uint8_t* p, size_t size, const std::string& name, int& bpt, int64_t& count) {
  if (size < 10 || std::memcmp(p, "\x93NUMPY", 6) != 0)
    throw DataError("shard '" + name + "': not a .npy file (missing \\x93NUMPY magic)");
  const bool v1 = p[6] == 1;
  const size_t len = v1 ? size_t(p[8]) | size_t(p[9]) << 8
                        : size_t(p[8]) | size_t(p[9]) << 8 | size_t(p[10]) << 16 | size_t(p[11]) << 24;
  const size_t start = v1 ? 10 : 12;
  if (start + len > size) throw DataError("shard '" + name + "': truncated .npy header");
  const std::string h(reinterpret_cast<const char*>(p + start), len);
  auto value_after = [&](const std::string& key) {
    const size_t k = h.find("'" + key + "'");
    if (k == std::string::npos) throw DataError("shard '" + name + "': .npy header lacks '" + key + "'");
    const size_t colon = h.find(':', k);
    return h.substr(colon + 1, h.find_first_of(",}", h.find_first_not_of(" ", colon + 1) + 1) - colon - 1);
  };
  const std::string descr = value_after("descr");
  if (descr.find("u2") != std::string::npos) bpt = 2;
  else if (descr.find("u4") != std::string::npos || descr.find("i4") != std::string::npos) bpt = 4;
  else throw DataError("shard '" + name + "': .npy dtype " + descr + " (expected uint16, uint32 or int32 tokens)");
  if (descr.find('>') != std::string::npos) throw DataError("shard '" + name + "': big-endian .npy is not supported");
  const size_t open = h.find('(', h.find("'shape'")), close = h.find(')', open);
  const std::string shape = h.substr(open + 1, close - open - 1);
  char* end = nullptr;
  count = std::strtoll(shape.c_str(), &end, 10);
  if (end == shape.c_str() || shape.find_first_of("0123456789", shape.find(',') + 1) != std::string::npos)
    throw DataError("shard '" + name + "': .npy shape (" + shape + ") must be one-dimensional");
  return start + len;
}

}  // namespace

ShardFile::ShardFile(const std::filesystem::path& spec) : path_(spec) {
  std::string name = spec.string();
  const bool nanogpt = name.rfind(kNanoGptPrefix, 0) == 0;  // headerless uint16 (nanoGPT)
  if (nanogpt) path_ = name = name.substr(std::strlen(kNanoGptPrefix));
  const bool npy = path_.extension() == ".npy";
  int fd = ::open(path_.c_str(), O_RDONLY);
  if (fd < 0) throw DataError("cannot open shard '" + name + "': " + std::strerror(errno));
  struct stat st {};
  ::fstat(fd, &st);
  map_bytes_ = static_cast<size_t>(st.st_size);
  const size_t min_bytes = nanogpt ? 2 : npy ? 10 : kShardHeaderInts * 4;
  if (map_bytes_ < min_bytes) {
    ::close(fd);
    throw DataError("shard '" + name + "' is too short (" + std::to_string(map_bytes_) + " bytes)" +
                    (nanogpt || npy ? "" : ": shorter than its 1024-byte header"));
  }
  map_ = ::mmap(nullptr, map_bytes_, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map_ == MAP_FAILED) throw DataError("cannot memory-map shard '" + name + "'");
  const auto* bytes = static_cast<const uint8_t*>(map_);
  size_t offset = kShardHeaderInts * 4;
  try {
    if (nanogpt) {
      offset = 0;
      bytes_per_token_ = 2;
      num_tokens_ = static_cast<int64_t>(map_bytes_ / 2);
    } else if (npy) {
      offset = parse_npy_header(bytes, map_bytes_, name, bytes_per_token_, num_tokens_);
    } else {
      read_llmc_header(name);
    }
  } catch (...) {
    unmap();
    throw;
  }
  const size_t want = offset + static_cast<size_t>(num_tokens_) * bytes_per_token_;
  if (num_tokens_ < 0 || want != map_bytes_) {
    unmap();
    throw DataError("shard '" + name + "' is truncated or padded: header says " +
                    std::to_string(num_tokens_) + " tokens (" + std::to_string(want) +
                    " bytes), file has " + std::to_string(map_bytes_) + " bytes");
  }
  tokens_ = bytes + offset;
}

void ShardFile::read_llmc_header(const std::string& name) {
  int32_t header[kShardHeaderInts];
  std::memcpy(header, map_, sizeof(header));
  if (header[0] == kShardMagicU16) bytes_per_token_ = 2;
  else if (header[0] == kShardMagicU32) bytes_per_token_ = 4;
  else
    throw DataError("shard '" + name + "' has bad magic " + std::to_string(header[0]) +
                    " (expected 20240520 for uint16 or 20240801 for uint32 tokens; a headerless nanoGPT"
                    " file needs the prefix nanogpt:)");
  num_tokens_ = header[2];
}

ShardFile::~ShardFile() { unmap(); }

void ShardFile::unmap() {
  if (map_ && map_ != MAP_FAILED) ::munmap(map_, map_bytes_);
  map_ = nullptr;
}

uint32_t ShardFile::token(int64_t i) const {
  if (bytes_per_token_ == 2) {
    uint16_t t;
    std::memcpy(&t, tokens_ + i * 2, 2);
    return t;
  }
  uint32_t t;
  std::memcpy(&t, tokens_ + i * 4, 4);
  return t;
}

void ShardFile::copy(int64_t start, int64_t count, int64_t* out) const {
  for (int64_t i = 0; i < count; ++i) out[i] = token(start + i);
}

uint32_t ShardFile::max_token() const {
  uint32_t m = 0;
  for (int64_t i = 0; i < num_tokens_; ++i) m = std::max(m, token(i));
  return m;
}

void write_shard(const std::filesystem::path& path, const std::vector<uint32_t>& tokens) {
  const uint32_t max_id = tokens.empty() ? 0 : *std::max_element(tokens.begin(), tokens.end());
  const bool narrow = max_id < 65536;
  if (tokens.size() > static_cast<size_t>(INT32_MAX))
    throw DataError("shard '" + path.string() + "': more than 2^31 tokens; split it");
  int32_t header[kShardHeaderInts] = {};
  header[0] = narrow ? kShardMagicU16 : kShardMagicU32;
  header[1] = narrow ? 1 : 2;
  header[2] = static_cast<int32_t>(tokens.size());
  std::string bytes(reinterpret_cast<const char*>(header), sizeof(header));
  bytes.reserve(bytes.size() + tokens.size() * (narrow ? 2 : 4));
  for (uint32_t t : tokens) {
    if (narrow) {
      uint16_t v = static_cast<uint16_t>(t);
      bytes.append(reinterpret_cast<const char*>(&v), 2);
    } else {
      bytes.append(reinterpret_cast<const char*>(&t), 4);
    }
  }
  write_file_atomic(path, bytes);
}

std::vector<std::filesystem::path> resolve_shards(const std::vector<std::string>& specs,
                                                  const std::string& key) {
  namespace fs = std::filesystem;
  std::vector<fs::path> out;
  for (const auto& given : specs) {
    const bool nanogpt = given.rfind(kNanoGptPrefix, 0) == 0;
    const std::string spec = nanogpt ? given.substr(std::strlen(kNanoGptPrefix)) : given;
    std::vector<fs::path> found;
    if (fs::is_directory(spec)) {
      for (const auto& e : fs::directory_iterator(spec))
        if (e.is_regular_file() && (e.path().extension() == ".bin" || e.path().extension() == ".npy"))
          found.push_back(e.path());
    } else {
      glob_t g{};
      if (::glob(spec.c_str(), 0, nullptr, &g) == 0)
        for (size_t i = 0; i < g.gl_pathc; ++i) found.emplace_back(g.gl_pathv[i]);
      ::globfree(&g);
    }
    if (found.empty()) throw DataError(key + ": '" + given + "' matches no shard file");
    std::sort(found.begin(), found.end());
    if (nanogpt)
      for (auto& f : found) f = kNanoGptPrefix + f.string();
    out.insert(out.end(), found.begin(), found.end());
  }
  if (out.empty()) throw DataError(key + ": no shard files given");
  return out;
}

}  // namespace ember
