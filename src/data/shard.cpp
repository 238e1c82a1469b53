#include "ember/data/shard.h"

#include <fcntl.h>
#include <glob.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>

#include <nlohmann/json.hpp>

#include "ember/io/npy.h"
#include "ember/util/error.h"
#include "ember/util/files.h"

namespace ember {

namespace {

constexpr const char* kNanoGptPrefix = "nanogpt:";

// A 1-D .npy array of uint16, uint32 or int32 tokens: returns the data offset and sets bytes per
// token and count; throws DataError naming the shard for anything else.
size_t npy_token_layout(const uint8_t* p, size_t size, const std::string& name, int& bpt, int64_t& count) {
  const NpyHeader h = parse_npy_header(p, size, "shard '" + name + "'");
  if (h.descr == "<u2")
    bpt = 2;
  else if (h.descr == "<u4" || h.descr == "<i4")
    bpt = 4;
  else
    throw DataError("shard '" + name + "': .npy dtype '" + h.descr +
                    "' (expected little-endian uint16, uint32 or int32 tokens)");
  if (h.shape.size() != 1)
    throw DataError("shard '" + name + "': .npy shape has " + std::to_string(h.shape.size()) +
                    " dimensions (expected one)");
  count = h.shape[0];
  return h.data_offset;
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
      offset = npy_token_layout(bytes, map_bytes_, name, bytes_per_token_, num_tokens_);
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
    throw DataError("shard '" + name + "' is truncated or padded: header says " + std::to_string(num_tokens_) +
                    " tokens (" + std::to_string(want) + " bytes), file has " + std::to_string(map_bytes_) + " bytes");
  }
  tokens_ = bytes + offset;
}

void ShardFile::read_llmc_header(const std::string& name) {
  int32_t header[kShardHeaderInts];
  std::memcpy(header, map_, sizeof(header));
  if (header[0] == kShardMagicU16)
    bytes_per_token_ = 2;
  else if (header[0] == kShardMagicU32)
    bytes_per_token_ = 4;
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

void write_shard(const std::filesystem::path& path, const std::vector<uint32_t>& tokens, int64_t vocab) {
  const uint32_t max_id = tokens.empty() ? 0 : *std::max_element(tokens.begin(), tokens.end());
  const bool narrow = vocab > 0 ? vocab <= 65536 : max_id < 65536;
  if (narrow && max_id >= 65536)
    throw DataError("shard '" + path.string() + "': token id " + std::to_string(max_id) +
                    " does not fit uint16 (vocabulary " + std::to_string(vocab) + ")");
  if (tokens.size() > static_cast<size_t>(INT32_MAX))
    throw DataError("shard '" + path.string() + "': more than 2^31 tokens; split it");
  int32_t header[kShardHeaderInts] = {};
  header[0] = narrow ? kShardMagicU16 : kShardMagicU32;
  header[1] = narrow ? 1 : 7;  // llm.c's versions for its gpt-2 (uint16) and llama-3 (uint32) files
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

namespace {

// " (DIR was prepared with --val-fraction 0: it has no val split)" when `spec` asks for val shards
// of a prepared corpus that has none, else "".
std::string train_only_hint(const std::filesystem::path& spec) {
  const auto manifest = (std::filesystem::is_directory(spec) ? spec : spec.parent_path()) / "manifest.json";
  if (!std::filesystem::exists(manifest) || spec.filename().string().rfind("val", 0) != 0) return "";
  try {
    const auto j = nlohmann::json::parse(read_text_file(manifest));
    if (j.value("val_shards", nlohmann::json::array()).empty() && j.value("val_fraction", 1.0) <= 0.0)
      return " (" + manifest.parent_path().string() + " was prepared with --val-fraction 0: it has no val split)";
  } catch (const std::exception&) {
  }
  return "";
}

}  // namespace

std::vector<std::filesystem::path> resolve_shards(const std::vector<std::string>& specs, const std::string& key) {
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
    if (found.empty()) throw DataError(key + ": '" + given + "' matches no shard file" + train_only_hint(spec));
    std::sort(found.begin(), found.end());
    if (nanogpt)
      for (auto& f : found) f = kNanoGptPrefix + f.string();
    out.insert(out.end(), found.begin(), found.end());
  }
  if (out.empty()) throw DataError(key + ": no shard files given");
  return out;
}

}  // namespace ember
