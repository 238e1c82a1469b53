#include "ember/util/files.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "ember/util/error.h"

namespace ember {

std::string read_text_file(const fs::path& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw Error("'" + path.string() + "' is a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open '" + path.string() + "' for reading");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void fsync_path(const fs::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) throw Error("cannot open '" + path.string() + "' to fsync");
  ::fsync(fd);
  ::close(fd);
}

void write_file_atomic(const fs::path& path, const std::string& contents) {
  fs::path tmp = path;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error("cannot write '" + tmp.string() + "'");
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    if (!out) throw Error("short write to '" + tmp.string() + "'");
  }
  fsync_path(tmp);
  fs::rename(tmp, path);
  fsync_path(path.has_parent_path() ? path.parent_path() : fs::path("."));
}

StagedDirectory::StagedDirectory(fs::path target, const std::string& what) : target_(target.lexically_normal()) {
  if (target_.filename().empty()) target_ = target_.parent_path();  // "runs/x/" names runs/x
  if (target_.empty() || target_ == "." || target_ == "..")
    throw UsageError(what + ": '" + target.string() + "' is not a directory to create");
  if (fs::exists(target_) && !(fs::is_directory(target_) && fs::is_empty(target_)))
    throw UsageError(what + ": '" + target_.string() + "' exists and is not empty");
  const fs::path parent = target_.has_parent_path() ? target_.parent_path() : fs::path(".");
  staging_ = parent / fmt::format(".{}.partial", target_.filename().string());
  std::error_code ec;
  fs::remove_all(staging_, ec);  // left by a crashed earlier attempt
  if (!ec) fs::create_directories(staging_, ec);
  if (ec)  // e.g. a read-only or virtual filesystem (/proc): nothing was written
    throw Error(fmt::format("{}: cannot create '{}' (a directory in '{}'): {}", what, target_.string(), parent.string(),
                            ec.message()));
}

StagedDirectory::~StagedDirectory() {
  std::error_code ignored;
  if (!published_) fs::remove_all(staging_, ignored);
}

void StagedDirectory::publish() {
  std::error_code ec;
  if (fs::exists(target_)) fs::remove(target_, ec);  // empty, checked at the start
  if (!ec) fs::rename(staging_, target_, ec);
  if (ec)
    throw Error(
        fmt::format("cannot move '{}' into place as '{}': {}", staging_.string(), target_.string(), ec.message()));
  fsync_path(target_.has_parent_path() ? target_.parent_path() : fs::path("."));
  published_ = true;
}

}  // namespace ember
