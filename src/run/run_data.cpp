#include "ember/run/run_data.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdlib>
#include <cstring>

#include "ember/data/shard.h"
#include "ember/util/error.h"
#include "ember/util/files.h"
#include "ember/util/log.h"
#include "ember/util/sha256.h"

namespace ember {
namespace {

constexpr const char* kNanoGptSpec = "nanogpt:";
constexpr const char* kRunDataFile = "data.json";

// {"nanogpt:", "data/train.bin"} for "nanogpt:data/train.bin"; {"", spec} otherwise.
std::pair<std::string, std::string> spec_prefix(const std::string& spec) {
  if (spec.rfind(kNanoGptSpec, 0) == 0) return {kNanoGptSpec, spec.substr(std::strlen(kNanoGptSpec))};
  return {"", spec};
}

std::vector<std::string> specs_from(const std::vector<std::string>& specs, const fs::path& base) {
  std::vector<std::string> out;
  for (const auto& spec : specs) {
    const auto [prefix, path] = spec_prefix(spec);
    const fs::path p(path);
    out.push_back(prefix + (p.is_absolute() ? p : base / p).lexically_normal().string());
  }
  return out;
}

bool has_relative(const std::vector<std::string>& specs) {
  for (const auto& spec : specs)
    if (!fs::path(spec_prefix(spec).second).is_absolute()) return true;
  return false;
}

bool every_spec_found(const std::vector<std::string>& specs, const std::string& key) {
  try {
    resolve_shards(specs, key);
    return true;
  } catch (const DataError&) {
    return false;
  }
}

std::string quoted(const std::vector<std::string>& items) { return fmt::format("'{}'", fmt::join(items, "', '")); }

fs::path absolute_dir(const fs::path& dir) {
  fs::path p = fs::absolute(dir).lexically_normal();
  return p.filename().empty() ? p.parent_path() : p;  // "runs/tiny/" is runs/tiny
}

}  // namespace

DataConfig absolute_data_paths(const DataConfig& data, const fs::path& base) {
  DataConfig out = data;
  out.train = specs_from(data.train, absolute_dir(base));
  out.val = specs_from(data.val, absolute_dir(base));
  return out;
}

RunDataRecord describe_run_data(const DataConfig& data) {
  RunDataRecord r;
  for (const auto& [split, specs] : {std::pair{"train", &data.train}, std::pair{"val", &data.val}}) {
    if (specs->empty()) continue;
    const auto first = resolve_shards(*specs, std::string("data.") + split).front().string();
    SplitRecord s;
    s.dir = fs::path(spec_prefix(first).second).parent_path();
    const fs::path manifest = s.dir / "manifest.json";
    if (fs::exists(manifest)) {
      s.manifest_sha256 = sha256_file_hex(manifest);
      if (r.tokenizer.empty()) {
        r.tokenizer = manifest_tokenizer_keys(read_manifest(manifest));
        r.tokenizer_manifest = manifest;
      }
    }
    r.splits[split] = s;
  }
  return r;
}

void write_run_data(const fs::path& run_dir, const RunDataRecord& record) {
  nlohmann::json j = {{"tokenizer", record.tokenizer}, {"tokenizer_manifest", record.tokenizer_manifest.string()}};
  for (const auto& [split, s] : record.splits)
    j[split] = {{"dir", s.dir.string()}, {"manifest_sha256", s.manifest_sha256}};
  write_file_atomic(run_dir / kRunDataFile, j.dump(2) + "\n");
}

std::optional<RunDataRecord> read_run_data(const fs::path& run_dir) {
  const fs::path file = run_dir / kRunDataFile;
  if (!fs::exists(file)) return std::nullopt;
  try {
    const auto j = nlohmann::json::parse(read_text_file(file));
    RunDataRecord r;
    r.tokenizer = j.at("tokenizer");
    r.tokenizer_manifest = j.at("tokenizer_manifest").get<std::string>();
    for (const char* split : {"train", "val"})
      if (j.contains(split))
        r.splits[split] = {j[split].at("dir").get<std::string>(), j[split].at("manifest_sha256").get<std::string>()};
    return r;
  } catch (const nlohmann::json::exception& e) {
    throw DataError(file.string() + ": not a run's data record (" + e.what() + ")");
  }
}

RunData::RunData(fs::path run_dir, DataConfig data, fs::path moved_to)
    : run_dir_(absolute_dir(run_dir)), data_(std::move(data)), record_(read_run_data(run_dir_)) {
  if (!moved_to.empty()) moved_to_ = absolute_dir(moved_to);
}

RunData::RunData(fs::path run_dir, DataConfig data)
    : RunData(std::move(run_dir), std::move(data), std::getenv(kDataDirEnv) ? std::getenv(kDataDirEnv) : "") {}

std::vector<std::string> RunData::train(const std::string& why) const { return locate("train", data_.train, why); }
std::vector<std::string> RunData::val(const std::string& why) const { return locate("val", data_.val, why); }

// The order of the header: as written, above the run directory (relative paths), EMBER_DATA_DIR.
std::vector<std::string> RunData::locate(const std::string& split, const std::vector<std::string>& specs,
                                         const std::string& why) const {
  const std::string key = "data." + split;
  if (specs.empty()) throw DataError(fmt::format("{}, but the run has no {}", why, key));
  if (every_spec_found(specs, key)) return specs;
  std::string looked = fmt::format("not found as written (from '{}')", fs::current_path().string());
  if (has_relative(specs)) {
    std::vector<std::string> tried;
    for (fs::path dir = run_dir_.parent_path();; dir = dir.parent_path()) {
      const auto candidate = specs_from(specs, dir);
      if (every_spec_found(candidate, key)) return candidate;
      tried.push_back(dir.string());
      if (dir == dir.parent_path()) break;
    }
    looked += ", nor from the directories above the run: " + quoted(tried);
  }
  if (auto moved = relocate(split, specs, key)) return *moved;
  if (!moved_to_.empty()) looked += fmt::format(", nor under {} '{}'", kDataDirEnv, moved_to_.string());
  if (record_ && record_->splits.count(split) && moved_to_.empty())
    looked += fmt::format("; if the data set moved, set {} to the directory that holds it now", kDataDirEnv);
  throw DataError(fmt::format("{} ({}: {}): {}", why, key, quoted(specs), looked));
}

// The specs with the recorded directory replaced by EMBER_DATA_DIR, when the shards are there and
// its manifest is the recorded one; nullopt when there is nothing to try or nothing there.
std::optional<std::vector<std::string>> RunData::relocate(const std::string& split,
                                                          const std::vector<std::string>& specs,
                                                          const std::string& key) const {
  if (moved_to_.empty() || !record_ || !record_->splits.count(split)) return std::nullopt;
  const SplitRecord& rec = record_->splits.at(split);
  std::vector<std::string> moved;
  for (const auto& spec : specs) {
    const auto [prefix, path] = spec_prefix(spec);
    const fs::path rel = fs::path(path).lexically_relative(rec.dir);
    const bool inside = !rel.empty() && *rel.begin() != "..";
    moved.push_back(inside ? prefix + (moved_to_ / rel).string() : spec);
  }
  if (!every_spec_found(moved, key)) return std::nullopt;
  const fs::path manifest = moved_to_ / "manifest.json";
  const std::string old_hash = rec.manifest_sha256.substr(0, 12);
  if (rec.manifest_sha256.empty()) {
    log::warn("{}: the run's data '{}' had no manifest.json, so nothing checks that {} '{}' holds the same data", key,
              rec.dir.string(), kDataDirEnv, moved_to_.string());
  } else if (!fs::exists(manifest)) {
    throw DataError(
        fmt::format("{}: {} '{}' has no manifest.json, so it is not recognisable as the run's data "
                    "set '{}' (manifest sha256 {})",
                    key, kDataDirEnv, moved_to_.string(), rec.dir.string(), old_hash));
  } else if (const std::string now = sha256_file_hex(manifest); now != rec.manifest_sha256) {
    throw DataError(
        fmt::format("{}: {} '{}' holds another data set (manifest sha256 {}) than the run was trained "
                    "on, '{}' (manifest sha256 {})",
                    key, kDataDirEnv, moved_to_.string(), now.substr(0, 12), rec.dir.string(), old_hash));
  }
  log::info("{}: the run's data '{}' found moved to '{}' ({})", key, rec.dir.string(), moved_to_.string(), kDataDirEnv);
  return moved;
}

// The first split whose shards are found: its key's split name and specs.
std::optional<std::pair<std::string, std::vector<std::string>>> RunData::found_split() const {
  for (const auto& [split, specs] : {std::pair{"train", &data_.train}, std::pair{"val", &data_.val}}) {
    if (specs->empty()) continue;
    try {
      return std::pair{std::string(split), locate(split, *specs, "")};
    } catch (const DataError&) {  // missing or refused: the record's tokenizer, or the next split
    }
  }
  return std::nullopt;
}

TextEncoder RunData::encoder() const {
  if (const auto found = found_split()) return dataset_encoder(found->second, "data." + found->first);
  if (record_ && !record_->tokenizer.empty()) return manifest_encoder(record_->tokenizer, record_->tokenizer_manifest);
  const std::string why = "the run's tokenizer is named by its data's manifest.json";
  if (!has_train() && !has_val()) throw DataError(why + ", but the run has no data.train or data.val");
  const std::string split = has_train() ? "train" : "val";  // not found: the error says where it looked
  return dataset_encoder(locate(split, has_train() ? data_.train : data_.val, why), "data." + split);
}

std::optional<DatasetTokenizer> RunData::tokenizer() const {
  if (const auto found = found_split()) return dataset_tokenizer(found->second, "data." + found->first);
  if (record_ && !record_->tokenizer.empty())
    return manifest_tokenizer(record_->tokenizer, record_->tokenizer_manifest);
  return std::nullopt;
}

}  // namespace ember
