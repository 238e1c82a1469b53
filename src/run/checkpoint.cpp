#include "ember/run/checkpoint.h"

#include <algorithm>
#include <sstream>

#include "ember/io/safetensors.h"
#include "ember/util/error.h"
#include "ember/util/files.h"
#include "ember/util/log.h"
#include "ember/util/sha256.h"

namespace ember {
namespace {

const char* kStateFile = "state.json";
const char* kSumsFile = "SHA256SUMS";

int64_t step_of(const fs::path& dir) {
  const std::string name = dir.filename().string();
  if (name.rfind("step_", 0) != 0) return -1;
  try {
    return std::stoll(name.substr(5));
  } catch (...) {
    return -1;
  }
}

// file -> sha256, as SHA256SUMS lists them.
std::map<std::string, std::string> read_sums(const fs::path& dir, const std::string& where) {
  if (!fs::is_directory(dir)) throw CheckpointError(where + " does not exist");
  if (!fs::exists(dir / kSumsFile)) throw CheckpointError(where + " is incomplete: no " + kSumsFile);
  std::istringstream in(read_text_file(dir / kSumsFile));
  std::map<std::string, std::string> sums;
  std::string hash, file;
  while (in >> hash >> file) sums[file] = hash;
  if (!sums.count(kStateFile))
    throw CheckpointError(where + " is incomplete: " + kSumsFile + " lists no " + kStateFile);
  return sums;
}

void verify_file(const fs::path& dir, const std::string& file, const std::map<std::string, std::string>& sums,
                 const std::string& where) {
  auto it = sums.find(file);
  if (it == sums.end()) throw CheckpointError(where + " is incomplete: " + kSumsFile + " does not list " + file);
  if (!fs::exists(dir / file)) throw CheckpointError(where + " is incomplete: " + file + " is missing");
  if (sha256_file_hex(dir / file) != it->second)
    throw CheckpointError(where + " is corrupt: " + file + " fails its SHA-256 checksum (truncated or modified)");
}

bool wanted(const std::string& component, const std::vector<std::string>& only) {
  return only.empty() || std::find(only.begin(), only.end(), component) != only.end();
}

}  // namespace

const ComponentState& CheckpointData::component(const std::string& name) const {
  auto it = components.find(name);
  if (it == components.end()) throw CheckpointError(where() + " holds no state for '" + name + "'");
  return it->second;
}

std::string component_shard(const std::string& name, int rank) { return name + "_shard_" + std::to_string(rank); }

ComponentState CheckpointData::merged(const std::string& name) const {
  const std::string prefix = name + "_shard_";  // component_shard's, before the rank
  auto is_shard = [&](const std::string& n) {
    return n.size() > prefix.size() && n.rfind(prefix, 0) == 0 &&
           n.find_first_not_of("0123456789", prefix.size()) == std::string::npos;
  };
  auto it = components.find(name);
  ComponentState out = it == components.end() ? ComponentState{} : it->second;
  bool found = it != components.end();
  for (const auto& [n, c] : components)
    if (is_shard(n)) {
      out.tensors.insert(c.tensors.begin(), c.tensors.end());
      found = true;
    }
  if (!found)
    throw CheckpointError(where() + " holds no state for '" + name + "' (neither " + name + kTensorExt + ", " +
                          name + "_shard_<rank>" + kTensorExt + " nor an entry in " + kStateFile + ")");
  return out;
}

std::map<std::string, ComponentState> save_components(const NamedComponents& components,
                                                      std::optional<StateScope> scope) {
  std::map<std::string, ComponentState> out;
  for (const auto& [name, component] : components)
    if (!scope || component->scope() == *scope) out[name] = component->save_state();
  return out;
}

void restore_components(const CheckpointData& data, const NamedComponents& components) {
  for (const auto& [name, component] : components) component->load_state(data.merged(name), data.where());
}

Checkpointer::Checkpointer(fs::path run_dir, int64_t keep) : run_dir_(std::move(run_dir)), keep_(keep) {}

fs::path Checkpointer::save(const std::map<std::string, ComponentState>& components, int64_t step) {
  return seal(begin(step), components, step);
}

fs::path Checkpointer::staging_dir(int64_t step) const {
  return checkpoints_dir() / (".tmp_step_" + std::to_string(step));
}

fs::path Checkpointer::begin(int64_t step) const {
  const fs::path tmp = staging_dir(step);
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  return tmp;
}

void Checkpointer::write_tensors(const fs::path& staging, const std::string& name, const ComponentState& state) {
  if (!state.json.is_null()) throw CheckpointError("component '" + name + "': only tensors can be written as a shard");
  save_safetensors(staging / (name + kTensorExt), state.tensors, {{"format", "pt"}});
}

fs::path Checkpointer::seal(const fs::path& tmp, const std::map<std::string, ComponentState>& components,
                            int64_t step) {
  const fs::path root = checkpoints_dir();
  const fs::path final_dir = root / ("step_" + std::to_string(step));
  nlohmann::json state = nlohmann::json::object();
  for (const auto& [name, s] : components) {
    if (!s.tensors.empty()) save_safetensors(tmp / (name + kTensorExt), s.tensors, {{"format", "pt"}});
    if (!s.json.is_null()) state[name] = s.json;
  }
  write_file_atomic(tmp / kStateFile, state.dump(2) + "\n");
  std::vector<std::string> files;  // every tensor file staged here, shards written by others included
  for (const auto& e : fs::directory_iterator(tmp))
    if (e.path().extension() == kTensorExt) files.push_back(e.path().filename().string());
  std::sort(files.begin(), files.end());
  files.push_back(kStateFile);
  std::string sums;
  for (const auto& f : files) sums += sha256_file_hex(tmp / f) + "  " + f + "\n";
  write_file_atomic(tmp / kSumsFile, sums);
  fsync_path(tmp);
  fs::remove_all(final_dir);
  fs::rename(tmp, final_dir);
  fsync_path(root);
  write_file_atomic(root / "latest", final_dir.filename().string() + "\n");
  prune();
  return final_dir;
}

std::vector<fs::path> checkpoints_newest_first(const fs::path& run_dir) {
  std::vector<fs::path> dirs;
  const fs::path root = run_dir / "checkpoints";
  if (!fs::exists(root)) return dirs;
  for (const auto& e : fs::directory_iterator(root))
    if (e.is_directory() && step_of(e.path()) >= 0) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end(), [](const fs::path& a, const fs::path& b) { return step_of(a) > step_of(b); });
  return dirs;
}

void Checkpointer::prune() const {
  auto dirs = checkpoints_newest_first(run_dir_);
  for (size_t i = static_cast<size_t>(keep_); i < dirs.size(); ++i) fs::remove_all(dirs[i]);
}

std::optional<CheckpointData> Checkpointer::load_latest(const std::function<void(const std::string&)>& warn) const {
  std::vector<fs::path> candidates;
  const fs::path pointer = checkpoints_dir() / "latest";
  if (fs::exists(pointer)) {
    std::string name = read_text_file(pointer);
    name.erase(name.find_last_not_of(" \n\r\t") + 1);
    candidates.push_back(checkpoints_dir() / name);
  }
  for (const auto& d : checkpoints_newest_first(run_dir_))
    if (std::find(candidates.begin(), candidates.end(), d) == candidates.end()) candidates.push_back(d);
  for (const auto& dir : candidates) {
    try {
      return load_checkpoint(dir);
    } catch (const Error& e) {
      warn(std::string(e.what()) + "; trying an older checkpoint");
    }
  }
  return std::nullopt;
}

void verify_checkpoint(const fs::path& dir, const std::vector<std::string>& files) {
  const std::string where = "checkpoint '" + dir.string() + "'";
  const auto sums = read_sums(dir, where);
  std::vector<std::string> check = files;
  if (check.empty())
    for (const auto& [file, hash] : sums) check.push_back(file);
  if (std::find(check.begin(), check.end(), kStateFile) == check.end()) check.push_back(kStateFile);
  for (const auto& f : check) verify_file(dir, f, sums, where);
}

CheckpointData load_checkpoint(const fs::path& dir, const std::vector<std::string>& tensor_components) {
  CheckpointData data;
  data.dir = dir;
  data.step = std::max<int64_t>(0, step_of(dir));
  std::vector<std::string> tensor_files;
  for (const auto& [file, hash] : read_sums(dir, data.where())) {
    const fs::path p(file);
    if (p.extension() == kTensorExt && wanted(p.stem().string(), tensor_components)) tensor_files.push_back(file);
  }
  verify_checkpoint(dir, tensor_files);
  nlohmann::json state;
  try {
    state = nlohmann::json::parse(read_text_file(dir / kStateFile));
  } catch (const nlohmann::json::exception&) {
    throw CheckpointError(data.where() + ": state.json is not valid JSON");
  }
  if (!state.is_object()) throw CheckpointError(data.where() + ": state.json is not a JSON object");
  for (const auto& [name, value] : state.items()) data.components[name].json = value;
  for (const auto& file : tensor_files)
    data.components[fs::path(file).stem().string()].tensors = load_safetensors(dir / file);
  return data;
}

CheckpointData load_checkpoint_or_run(const fs::path& path, const std::vector<std::string>& tensor_components) {
  if (fs::exists(path / kSumsFile) || step_of(path) >= 0) return load_checkpoint(path, tensor_components);
  if (!fs::is_directory(path))
    throw CheckpointError("'" + path.string() + "' is neither a run nor a checkpoint directory");
  for (const auto& dir : checkpoints_newest_first(path)) {
    try {
      return load_checkpoint(dir, tensor_components);
    } catch (const CheckpointError& e) {
      log::warn("{}; trying an older checkpoint", e.what());
    }
  }
  throw CheckpointError("run '" + path.string() + "' has no complete checkpoint");
}

fs::path run_dir_of_checkpoint(const fs::path& checkpoint_dir) { return checkpoint_dir.parent_path().parent_path(); }

}  // namespace ember
