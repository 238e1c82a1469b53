#include "ember/data/shard_writer.h"

#include <fmt/format.h>

#include <algorithm>

#include "ember/data/shard.h"
#include "ember/util/error.h"
#include "ember/util/files.h"

namespace ember {
namespace {

fs::path staging_dir(const fs::path& out) { return out / ".incomplete"; }

}  // namespace

ShardWriter::ShardWriter(fs::path dir, std::string split, int64_t max_tokens, int64_t vocab)
    : dir_(std::move(dir)),
      split_(std::move(split)),
      max_(max_tokens),
      vocab_(vocab),
      counts_(static_cast<size_t>(vocab), 0) {
  if (max_ < 1) throw UsageError(fmt::format("prepare: --shard-tokens must be positive, got {}", max_));
}

void ShardWriter::add(const std::vector<uint32_t>& ids, const std::string& where) {
  for (const uint32_t id : ids) {
    if (id >= vocab_) throw DataError(fmt::format("prepare: {}: token id {} >= vocabulary size {}", where, id, vocab_));
    ++counts_[id];
  }
  total_ += static_cast<int64_t>(ids.size());
  for (size_t at = 0; at < ids.size();) {  // shards of exactly max_ tokens but the last
    const size_t take = std::min(ids.size() - at, static_cast<size_t>(max_) - tokens_.size());
    tokens_.insert(tokens_.end(), ids.begin() + static_cast<std::ptrdiff_t>(at),
                   ids.begin() + static_cast<std::ptrdiff_t>(at + take));
    at += take;
    if (static_cast<int64_t>(tokens_.size()) == max_) flush();
  }
}

void ShardWriter::flush() {
  if (tokens_.empty()) return;
  const auto name = fmt::format("{}_{:05d}.bin", split_, written_.size());
  write_shard(dir_ / name, tokens_, vocab_);
  written_.push_back(name);
  tokens_.clear();
}

fs::path begin_staging(const fs::path& out) {
  fs::create_directories(out);
  fs::remove_all(staging_dir(out));
  fs::create_directories(staging_dir(out));
  return staging_dir(out);
}

void publish_shards(const fs::path& out, const std::vector<std::string>& names) {
  fs::remove(out / "manifest.json");
  for (const auto& e : fs::directory_iterator(out)) {
    const std::string n = e.path().filename().string();
    if ((n.rfind("train_", 0) == 0 || n.rfind("val_", 0) == 0) && e.path().extension() == ".bin") fs::remove(e.path());
  }
  for (const auto& n : names) fs::rename(staging_dir(out) / n, out / n);
  fs::remove_all(staging_dir(out));
}

namespace {

fs::path normal_dir(const fs::path& p) {  // absolute, without a trailing separator
  auto n = fs::absolute(p).lexically_normal();
  return n.has_filename() ? n : n.parent_path();
}

}  // namespace

StagingGuard::StagingGuard(fs::path out) : out_(std::move(out)) {
  for (fs::path p = normal_dir(out_); !fs::exists(p); p = p.parent_path()) {
    made_ = p;
    if (p == p.parent_path()) break;
  }
}

StagingGuard::~StagingGuard() {
  std::error_code ignored;
  if (!active_) return;
  fs::remove_all(staging_dir(out_), ignored);
  if (made_.empty()) return;
  for (fs::path p = normal_dir(out_); p.string().size() >= made_.string().size(); p = p.parent_path())
    if (!fs::remove(p, ignored)) break;  // only empty folders go: fs::remove fails on others
}

}  // namespace ember
