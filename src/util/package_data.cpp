#include "ember/util/package_data.h"

#include <algorithm>
#include <mutex>

namespace ember {
namespace {

struct Registry {
  std::mutex mutex;
  std::vector<std::filesystem::path> dirs;
};

Registry& registry() {  // constructed on first use: static initialisers of other files may call in
  static Registry r;
  return r;
}

}  // namespace

bool register_package_data_dir(const char* dir) {
  auto& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  auto path = std::filesystem::path(dir).lexically_normal();
  if (!path.has_filename() && path.has_parent_path()) path = path.parent_path();  // "x/" and "x" are one
  if (std::find(r.dirs.begin(), r.dirs.end(), path) == r.dirs.end()) r.dirs.push_back(path);
  return true;
}

std::vector<std::filesystem::path> package_data_dirs() {
  auto& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  return r.dirs;
}

}  // namespace ember
