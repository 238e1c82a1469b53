#include "ember/data/prepare_merge.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>

#include "ember/data/shard.h"
#include "ember/data/text_encoder.h"
#include "ember/util/error.h"
#include "ember/util/progress.h"

namespace ember {
namespace fs = std::filesystem;
namespace {

constexpr int64_t kCopyTokens = 1 << 22;  // tokens read from a part's shard at a time

// The manifest keys a merge computes; every other key must agree between the parts.
const char* const kComputedKeys[] = {"train_tokens", "val_tokens", "train_shards", "val_shards", "sources", "part"};

struct Part {
  fs::path dir;
  nlohmann::json manifest;
  int index() const { return manifest["part"]["index"].get<int>(); }
};

Part read_part(const fs::path& dir) {
  const fs::path file = dir / "manifest.json";
  if (!fs::exists(file))
    throw DataError(fmt::format("prepare merge: '{}' has no manifest.json: not a finished prepare part", dir.string()));
  Part p{dir, read_manifest(file)};
  if (!p.manifest.contains("part"))
    throw DataError(fmt::format("prepare merge: '{}' is a whole prepare, not a part (prepared without --part I/N)",
                                dir.string()));
  return p;
}

nlohmann::json shared_keys(const nlohmann::json& manifest) {
  nlohmann::json keys = manifest;
  for (const char* k : kComputedKeys) keys.erase(k);
  return keys;
}

// "val_fraction 0.2 vs 0.3" for each key two parts must share but do not.
std::vector<std::string> differences(const nlohmann::json& a, const nlohmann::json& b) {
  nlohmann::json x = shared_keys(a), y = shared_keys(b);
  x["shard_tokens"] = a["part"]["shard_tokens"];
  y["shard_tokens"] = b["part"]["shard_tokens"];
  std::vector<std::string> out;
  for (const auto& [key, value] : x.items())
    if (!y.contains(key) || y[key] != value)
      out.push_back(fmt::format("{} {} vs {}", key, value.dump(), y.contains(key) ? y[key].dump() : "(none)"));
  for (const auto& [key, value] : y.items())
    if (!x.contains(key)) out.push_back(fmt::format("{} (none) vs {}", key, value.dump()));
  return out;
}

// The parts sorted by index, checked to be the N parts of one prepare.
std::vector<Part> checked_parts(const std::vector<fs::path>& dirs) {
  std::vector<Part> parts;
  for (const auto& d : dirs) parts.push_back(read_part(d));
  std::sort(parts.begin(), parts.end(), [](const Part& a, const Part& b) { return a.index() < b.index(); });
  const auto& first = parts.front().manifest;
  const int count = first["part"]["count"].get<int>();
  for (size_t i = 0; i < parts.size(); ++i) {
    const auto& m = parts[i].manifest;
    if (m["part"]["inputs_sha256"] != first["part"]["inputs_sha256"] || m["part"]["count"] != first["part"]["count"])
      throw DataError(fmt::format("prepare merge: '{}' and '{}' are parts of different prepares (another document "
                                  "list or part count)",
                                  parts.front().dir.string(), parts[i].dir.string()));
    if (const auto diff = differences(first, m); !diff.empty())
      throw DataError(fmt::format("prepare merge: '{}' and '{}' were prepared differently: {}",
                                  parts.front().dir.string(), parts[i].dir.string(), fmt::join(diff, "; ")));
    if (i > 0 && parts[i].index() == parts[i - 1].index())
      throw DataError(fmt::format("prepare merge: part {}/{} is given twice: '{}' and '{}'", parts[i].index(), count,
                                  parts[i - 1].dir.string(), parts[i].dir.string()));
  }
  std::vector<int> missing;
  for (int k = 1, i = 0; k <= count; ++k) {
    if (i < static_cast<int>(parts.size()) && parts[static_cast<size_t>(i)].index() == k)
      ++i;
    else
      missing.push_back(k);
  }
  if (!missing.empty())
    throw DataError(fmt::format("prepare merge: part(s) {} of {} missing (given: {} directories)",
                                fmt::join(missing, ", "), count, parts.size()));
  return parts;
}

int64_t total_tokens(const std::vector<Part>& parts) {
  int64_t n = 0;
  for (const auto& p : parts) n += p.manifest["train_tokens"].get<int64_t>() + p.manifest["val_tokens"].get<int64_t>();
  return n;
}

}  // namespace

PrepareSummary merge_prepared_parts(const MergeOptions& opt) {
  if (opt.parts.empty()) throw UsageError("prepare merge: no part directories given");
  for (const auto& d : opt.parts)
    if (fs::exists(opt.out_dir) && fs::equivalent(d, opt.out_dir))
      throw UsageError(fmt::format("prepare merge: --out '{}' is one of the parts", opt.out_dir.string()));
  const auto parts = checked_parts(opt.parts);
  const auto& first = parts.front().manifest;
  ShardSet shards(opt.out_dir, first["part"]["shard_tokens"].get<int64_t>(), first["vocab_size"].get<int64_t>());
  std::optional<ProgressMeter> progress;
  if (opt.progress) progress.emplace("prepare merge", static_cast<double>(total_tokens(parts)));
  std::vector<uint32_t> ids;
  std::vector<int64_t> chunk(static_cast<size_t>(kCopyTokens));
  int64_t done = 0, documents = 0;
  nlohmann::json sources = nlohmann::json::array();
  for (const auto& part : parts) {
    for (const char* split : {"train", "val"}) {
      for (const auto& name : part.manifest[std::string(split) + "_shards"]) {
        const ShardFile shard(part.dir / name.get<std::string>());
        for (int64_t at = 0; at < shard.size(); at += kCopyTokens) {
          const int64_t n = std::min(kCopyTokens, shard.size() - at);
          shard.copy(at, n, chunk.data());
          ids.assign(chunk.begin(), chunk.begin() + n);
          shards.add(ids, shard.path().string(), std::string(split) == "val");
          done += n;
          if (progress) progress->update(static_cast<double>(done));
        }
      }
    }
    for (const auto& s : part.manifest["sources"]) sources.push_back(s);
    documents += part.manifest["part"]["documents"].get<int64_t>();
  }
  ShardSet::Description d;
  d.tokenizer = shared_keys(first);
  for (const char* k : {"vocab_size", "dtype", "val_fraction", "token_counts"}) d.tokenizer.erase(k);
  d.sources = std::move(sources);
  d.files = d.documents = documents;  // the parts count their files
  d.val_fraction = first["val_fraction"].get<double>();
  d.eval_only = d.val_fraction >= 1.0;
  d.empty_split_hint = "prepare the whole list with more documents or another --val-fraction";
  return shards.finish(d);
}

}  // namespace ember
