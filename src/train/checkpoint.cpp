#include "ember/train/checkpoint.h"

#include "ember/util/log.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "ember/util/error.h"
#include "ember/util/files.h"
#include "ember/util/sha256.h"

namespace ember {
namespace {

const char* kFiles[] = {"model.safetensors", "optim.safetensors", "state.json"};

int64_t step_of(const fs::path& dir) {
  const std::string name = dir.filename().string();
  if (name.rfind("step_", 0) != 0) return -1;
  try {
    return std::stoll(name.substr(5));
  } catch (...) {
    return -1;
  }
}

}  // namespace

Checkpointer::Checkpointer(fs::path run_dir, int64_t keep) : run_dir_(std::move(run_dir)), keep_(keep) {}

fs::path Checkpointer::save(const CheckpointData& data, int64_t step) {
  const fs::path root = checkpoints_dir();
  fs::create_directories(root);
  const fs::path final_dir = root / ("step_" + std::to_string(step));
  const fs::path tmp = root / (".tmp_step_" + std::to_string(step));
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  save_safetensors(tmp / kFiles[0], data.model, {{"format", "pt"}});
  save_safetensors(tmp / kFiles[1], data.optim, {{"format", "pt"}});
  write_file_atomic(tmp / kFiles[2], data.state.dump(2) + "\n");
  std::string sums;
  for (const char* f : kFiles) sums += sha256_file_hex(tmp / f) + "  " + f + "\n";
  write_file_atomic(tmp / "SHA256SUMS", sums);
  fsync_path(tmp);
  fs::remove_all(final_dir);
  fs::rename(tmp, final_dir);
  fsync_path(root);
  write_file_atomic(root / "latest", final_dir.filename().string() + "\n");
  prune();
  return final_dir;
}

std::vector<fs::path> Checkpointer::complete_by_step_desc() const {
  std::vector<fs::path> dirs;
  if (!fs::exists(checkpoints_dir())) return dirs;
  for (const auto& e : fs::directory_iterator(checkpoints_dir()))
    if (e.is_directory() && step_of(e.path()) >= 0) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end(),
            [](const fs::path& a, const fs::path& b) { return step_of(a) > step_of(b); });
  return dirs;
}

void Checkpointer::prune() const {
  auto dirs = complete_by_step_desc();
  for (size_t i = static_cast<size_t>(keep_); i < dirs.size(); ++i) fs::remove_all(dirs[i]);
}

std::optional<CheckpointData> Checkpointer::load_latest(
    const std::function<void(const std::string&)>& warn) const {
  std::vector<fs::path> candidates;
  const fs::path pointer = checkpoints_dir() / "latest";
  if (fs::exists(pointer)) {
    std::string name = read_text_file(pointer);
    name.erase(name.find_last_not_of(" \n\r\t") + 1);
    candidates.push_back(checkpoints_dir() / name);
  }
  for (const auto& d : complete_by_step_desc())
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

void verify_checkpoint(const fs::path& dir) {
  const std::string where = "checkpoint '" + dir.string() + "'";
  if (!fs::is_directory(dir)) throw CheckpointError(where + " does not exist");
  if (!fs::exists(dir / "SHA256SUMS")) throw CheckpointError(where + " is incomplete: no SHA256SUMS");
  std::istringstream sums(read_text_file(dir / "SHA256SUMS"));
  std::string hash, file;
  int checked = 0;
  while (sums >> hash >> file) {
    if (!fs::exists(dir / file)) throw CheckpointError(where + " is incomplete: " + file + " is missing");
    if (sha256_file_hex(dir / file) != hash)
      throw CheckpointError(where + " is corrupt: " + file + " fails its SHA-256 checksum (truncated or modified)");
    ++checked;
  }
  if (checked != 3) throw CheckpointError(where + " is incomplete: SHA256SUMS lists " +
                                          std::to_string(checked) + " of 3 files");
}

CheckpointData load_checkpoint(const fs::path& dir) {
  verify_checkpoint(dir);
  CheckpointData data;
  data.dir = dir;
  data.model = load_safetensors(dir / kFiles[0]);
  data.optim = load_safetensors(dir / kFiles[1]);
  try {
    data.state = nlohmann::json::parse(read_text_file(dir / kFiles[2]));
  } catch (const nlohmann::json::exception&) {
    throw CheckpointError("checkpoint '" + dir.string() + "': state.json is not valid JSON");
  }
  return data;
}

CheckpointData load_checkpoint_or_run(const fs::path& path) {
  if (fs::exists(path / "SHA256SUMS") || step_of(path) >= 0) return load_checkpoint(path);
  if (!fs::is_directory(path)) throw CheckpointError("'" + path.string() + "' is neither a run nor a checkpoint directory");
  auto loaded = Checkpointer(path, 1).load_latest(
      [](const std::string& msg) { log::warn("{}", msg); });
  if (!loaded) throw CheckpointError("run '" + path.string() + "' has no complete checkpoint");
  return *loaded;
}

}  // namespace ember
