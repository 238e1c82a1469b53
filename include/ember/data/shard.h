// Token shards in the llm.c format: 256 x int32 header (magic, version, token count), then the
// tokens: uint16 (magic 20240520) or uint32 (magic 20240801). Read through a memory map.
// Also read as shards, for corpora tokenized elsewhere:
//   *.npy                 a 1-D NumPy array of uint16, uint32 or int32 token ids
//   nanogpt:PATH_OR_GLOB  headerless uint16 files (nanoGPT's train.bin / val.bin), e.g.
//                         data.train: ["nanogpt:data/owt/train.bin"] or --data nanogpt:val.bin
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace ember {

constexpr int32_t kShardMagicU16 = 20240520;
constexpr int32_t kShardMagicU32 = 20240801;
constexpr size_t kShardHeaderInts = 256;

class ShardFile {
 public:
  explicit ShardFile(const std::filesystem::path& path);  // throws DataError naming the file
  ~ShardFile();
  ShardFile(const ShardFile&) = delete;
  ShardFile& operator=(const ShardFile&) = delete;

  int64_t size() const { return num_tokens_; }
  int bytes_per_token() const { return bytes_per_token_; }
  uint32_t token(int64_t i) const;
  void copy(int64_t start, int64_t count, int64_t* out) const;
  uint32_t max_token() const;  // scans the whole shard
  const std::filesystem::path& path() const { return path_; }

 private:
  void unmap();
  void read_llmc_header(const std::string& name);
  std::filesystem::path path_;
  void* map_ = nullptr;
  size_t map_bytes_ = 0;
  const uint8_t* tokens_ = nullptr;
  int64_t num_tokens_ = 0;
  int bytes_per_token_ = 2;
};

// Writes tokens as a shard, atomically: uint16 (llm.c's version 1) when the vocabulary fits, else
// uint32 (llm.c's version 7). vocab = 0: decided by the largest id in `tokens`; a prepared corpus
// passes its vocabulary so that every shard has the dtype its manifest declares.
void write_shard(const std::filesystem::path& path, const std::vector<uint32_t>& tokens, int64_t vocab = 0);

// Expands files, directories (their *.bin and *.npy files, sorted) and glob patterns; a
// "nanogpt:" prefix carries over to every file it expands to. `key` names the
// config key in errors.
std::vector<std::filesystem::path> resolve_shards(const std::vector<std::string>& specs, const std::string& key);

}  // namespace ember
