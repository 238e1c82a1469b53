#include "ember/interop/hf_files.h"

#include <fmt/format.h>

#include <cctype>
#include <fstream>
#include <set>

#include "ember/util/error.h"
#include "ember/util/files.h"

namespace ember {

namespace {
const std::map<std::string, std::string> kFormat = {{"format", "pt"}};  // transformers checks it

// Groups tensors (in name order) into shards of at most max_bytes (a larger tensor alone).
std::vector<TensorMap> pack_shards(const TensorMap& tensors, int64_t max_bytes) {
  std::vector<TensorMap> shards(1);
  int64_t bytes = 0;
  for (const auto& [name, t] : tensors) {
    const int64_t size = static_cast<int64_t>(t.nbytes());
    if (!shards.back().empty() && bytes + size > max_bytes) {
      shards.emplace_back();
      bytes = 0;
    }
    shards.back()[name] = t;
    bytes += size;
  }
  return shards;
}
}  // namespace

std::vector<fs::path> write_hf_weights(const fs::path& dir, const TensorMap& tensors, int64_t max_shard_bytes) {
  const auto shards = pack_shards(tensors, max_shard_bytes);
  if (shards.size() == 1) {
    save_safetensors(dir / "model.safetensors", tensors, kFormat);
    return {dir / "model.safetensors"};
  }
  std::vector<fs::path> files;
  nlohmann::json weight_map = nlohmann::json::object();
  int64_t total = 0;
  for (size_t i = 0; i < shards.size(); ++i) {
    const std::string file = fmt::format("model-{:05d}-of-{:05d}.safetensors", i + 1, shards.size());
    save_safetensors(dir / file, shards[i], kFormat);
    files.push_back(dir / file);
    for (const auto& [name, t] : shards[i]) {
      weight_map[name] = file;
      total += static_cast<int64_t>(t.nbytes());
    }
  }
  const nlohmann::json index = {{"metadata", {{"total_size", total}}}, {"weight_map", weight_map}};
  write_file_atomic(dir / "model.safetensors.index.json", index.dump(2) + "\n");
  files.push_back(dir / "model.safetensors.index.json");
  return files;
}

namespace {
TensorMap read_sharded(const fs::path& dir, const fs::path& index_file) {
  nlohmann::json index;
  try {
    index = nlohmann::json::parse(read_text_file(index_file));
  } catch (const nlohmann::json::exception& e) {
    throw CheckpointError("'" + index_file.string() + "' is not JSON: " + e.what());
  }
  if (!index.contains("weight_map") || !index["weight_map"].is_object())
    throw CheckpointError("'" + index_file.string() + "' has no weight_map");
  std::set<std::string> files;
  for (const auto& [name, file] : index["weight_map"].items()) {
    if (!file.is_string())
      throw CheckpointError("'" + index_file.string() + "': weight_map['" + name + "'] is " + file.dump() +
                            ", not a file name");
    files.insert(file.get<std::string>());
  }
  TensorMap out;
  for (const auto& file : files) {
    std::error_code ec;  // a name the file system refuses (too long) is missing too, not a filesystem_error
    if (!fs::exists(dir / file, ec))
      throw CheckpointError("'" + index_file.string() + "' lists '" + file + "', which is missing");
    for (auto& [name, t] : load_safetensors(dir / file)) out[name] = t;
  }
  for (const auto& [name, file] : index["weight_map"].items())
    if (!out.count(name))
      throw CheckpointError("'" + (dir / file.get<std::string>()).string() + "' lacks tensor '" + name +
                            "' that the index lists");
  return out;
}
}  // namespace

TensorMap read_hf_weights(const fs::path& dir) {
  if (fs::exists(dir / "model.safetensors.index.json")) return read_sharded(dir, dir / "model.safetensors.index.json");
  if (fs::exists(dir / "model.safetensors")) return load_safetensors(dir / "model.safetensors");
  if (fs::exists(dir / "pytorch_model.bin") || fs::exists(dir / "pytorch_model.bin.index.json"))
    throw CheckpointError("'" + dir.string() +
                          "' holds pytorch_model.bin (pickle), which ember does not read: save it with "
                          "safe_serialization=True");
  throw CheckpointError("no model.safetensors or model.safetensors.index.json in '" + dir.string() + "'");
}

nlohmann::json read_hf_config(const fs::path& dir) {
  const fs::path file = dir / "config.json";
  if (!fs::is_directory(dir)) throw CheckpointError("'" + dir.string() + "' is not a directory");
  if (!fs::exists(file)) throw CheckpointError("no config.json in '" + dir.string() + "'");
  try {
    auto c = nlohmann::json::parse(read_text_file(file));
    if (!c.is_object()) throw CheckpointError("'" + file.string() + "' is not a JSON object");
    return c;
  } catch (const nlohmann::json::exception& e) {
    throw CheckpointError("'" + file.string() + "' is not JSON: " + e.what());
  }
}

int64_t parse_byte_size(const std::string& text, const std::string& flag) {
  size_t end = 0;
  double value = 0;
  try {
    value = std::stod(text, &end);
  } catch (const std::exception&) {
    end = 0;
  }
  std::string unit = text.substr(end);
  for (auto& ch : unit) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  static const std::map<std::string, double> units = {{"", 1}, {"B", 1}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9},
                                                      {"KIB", 1024.0}, {"MIB", 1048576.0}, {"GIB", 1073741824.0}};
  auto it = units.find(unit);
  if (end == 0 || it == units.end() || value <= 0)
    throw UsageError(flag + ": '" + text + "' is not a size (e.g. 5GB, 200MB)");
  return static_cast<int64_t>(value * it->second);
}

}  // namespace ember
