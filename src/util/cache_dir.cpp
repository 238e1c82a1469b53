#include "ember/util/cache_dir.h"

#include <cstdlib>

namespace ember {

std::filesystem::path user_cache_dir(const std::string& what) {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::filesystem::path(xdg) / "ember" / what;
  if (const char* home = std::getenv("HOME"); home && *home) return std::filesystem::path(home) / ".cache" / "ember" / what;
  return std::filesystem::temp_directory_path() / ("ember-" + what);
}

}  // namespace ember
