// Writing one split of a prepared corpus: numbered shards (<split>_00000.bin, ...) of at most
// max_tokens each, every id checked against the vocabulary and counted. Shards are staged in
// <out>/.incomplete and moved into place by publish_shards, so an interrupted prepare leaves
// nothing that looks complete. Shared by `prepare bytes` and `prepare text`.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace ember {

class ShardWriter {
 public:
  ShardWriter(std::filesystem::path dir, std::string split, int64_t max_tokens, int64_t vocab);
  // DataError naming `where` for an id >= vocab.
  void add(const std::vector<uint32_t>& ids, const std::string& where);
  void flush();
  int64_t total() const { return total_; }
  const std::vector<std::string>& written() const { return written_; }  // file names, in order
  const std::vector<int64_t>& counts() const { return counts_; }        // per-id frequencies

 private:
  std::filesystem::path dir_;
  std::string split_;
  int64_t max_, vocab_, total_ = 0;
  std::vector<uint32_t> tokens_;
  std::vector<std::string> written_;
  std::vector<int64_t> counts_;
};

// <out>/.incomplete, emptied. An earlier prepare's shards and manifest.json stay until publish.
std::filesystem::path begin_staging(const std::filesystem::path& out);
// Moves the staged shards into `out`, replacing the shards of an earlier prepare there (its
// manifest.json, the mark of a complete prepare, goes first).
void publish_shards(const std::filesystem::path& out, const std::vector<std::string>& names);

// Removes <out>/.incomplete (and `out` itself when this prepare made it) when a prepare fails
// before release(): a refused or failed prepare leaves `out` as it was. Make it before begin_staging.
class StagingGuard {
 public:
  explicit StagingGuard(std::filesystem::path out);
  ~StagingGuard();
  StagingGuard(const StagingGuard&) = delete;
  StagingGuard& operator=(const StagingGuard&) = delete;
  void release() { active_ = false; }

 private:
  std::filesystem::path out_;
  std::filesystem::path made_;  // the outermost folder this prepare creates (empty: none)
  bool active_ = true;
};

}  // namespace ember
