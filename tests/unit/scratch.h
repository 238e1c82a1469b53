// A fresh, empty scratch directory for one test: <tmp>/ember_unit_tests/<suite>/<name>, emptied
// when asked for. Tests that run in parallel use different names.
#pragma once
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace ember::testing {

inline std::filesystem::path scratch_dir(const std::string& suite, const std::string& name = "") {
  auto dir = std::filesystem::temp_directory_path() / "ember_unit_tests" / suite;
  if (!name.empty()) dir /= name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// Writes `text` to dir/name and returns the path.
inline std::filesystem::path write_text(const std::filesystem::path& dir, const std::string& name,
                                        const std::string& text) {
  const auto path = dir / name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// The user cache ($XDG_CACHE_HOME) in a scratch folder of the test's own, for one scope.
struct ScratchCache {
  std::filesystem::path dir;
  std::string was;
  bool had;
  ScratchCache(const std::string& suite, const std::string& name) : dir(scratch_dir(suite, name)) {
    const char* v = std::getenv("XDG_CACHE_HOME");
    had = v != nullptr;
    if (had) was = v;
    ::setenv("XDG_CACHE_HOME", dir.c_str(), 1);
  }
  ~ScratchCache() {
    if (had) ::setenv("XDG_CACHE_HOME", was.c_str(), 1);
    else ::unsetenv("XDG_CACHE_HOME");
  }
  ScratchCache(const ScratchCache&) = delete;
  ScratchCache& operator=(const ScratchCache&) = delete;
};

}  // namespace ember::testing
