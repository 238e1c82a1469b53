#include "ember/data/token_counts.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ember/data/shard.h"
#include "ember/util/error.h"
#include "ember/util/files.h"
#include "ember/util/log.h"

namespace ember {
namespace {

std::vector<int64_t> read_counts(const fs::path& file, int64_t vocab) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_text_file(file));
  } catch (const nlohmann::json::exception& e) {
    throw DataError(file.string() + ": not valid JSON (" + e.what() + ")");
  }
  if (!j.is_array()) throw DataError(file.string() + ": expected a JSON array of counts, one per token id");
  if (static_cast<int64_t>(j.size()) > vocab)
    throw DataError(
        fmt::format("{}: counts for {} ids do not fit model.vocab_size = {}", file.string(), j.size(), vocab));
  std::vector<int64_t> counts(static_cast<size_t>(vocab), 0);
  for (size_t i = 0; i < j.size(); ++i) counts[i] = j[i].get<int64_t>();
  return counts;
}

std::vector<int64_t> count_shards(const std::vector<fs::path>& shards, int64_t vocab) {
  std::vector<int64_t> counts(static_cast<size_t>(vocab), 0);
  for (const auto& path : shards) {
    ShardFile shard(path);
    for (int64_t i = 0; i < shard.size(); ++i) {
      const uint32_t id = shard.token(i);
      if (id >= vocab)
        throw DataError(fmt::format("{}: token id {} >= model.vocab_size = {}", path.string(), id, vocab));
      ++counts[id];
    }
  }
  return counts;
}

}  // namespace

std::vector<int64_t> training_token_counts(const std::vector<std::string>& train_specs, int64_t vocab) {
  const auto shards = resolve_shards(train_specs, "data.train");
  const fs::path manifest = shards.front().parent_path() / "manifest.json";
  if (fs::exists(manifest)) {
    const auto m = nlohmann::json::parse(read_text_file(manifest), nullptr, /*allow_exceptions=*/false);
    if (m.is_object() && m.contains("token_counts")) {
      const fs::path file = manifest.parent_path() / m["token_counts"].get<std::string>();
      if (fs::exists(file)) return read_counts(file, vocab);
    }
  }
  log::info("no train_token_counts.json beside {}: counting the {} training shard(s)", shards.front().string(),
            shards.size());
  return count_shards(shards, vocab);
}

}  // namespace ember
