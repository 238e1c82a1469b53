#include "ember/data/tokenizer_search.h"

#include <cstdlib>
#include <system_error>

#include "ember/util/install_prefix.h"
#include "ember/util/package_data.h"
#include "ember/util/error.h"

namespace ember {

namespace {

std::string tokenizer_search_getenv(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

}  // namespace

TokenizerSearchEnv tokenizer_search_env() {
  TokenizerSearchEnv env;
  env.tokenizer_dir = tokenizer_search_getenv("EMBER_TOKENIZER_DIR");
  env.xdg_cache_home = tokenizer_search_getenv("XDG_CACHE_HOME");
  env.home = tokenizer_search_getenv("HOME");
  std::error_code ec;
  env.executable = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) env.executable.clear();
  env.install_prefix = kEmberInstallPrefix;
  env.package_data = package_data_dirs();
  return env;
}

std::vector<TokenizerPlace> tokenizer_search_dirs(const TokenizerSearchEnv& env) {
  std::vector<TokenizerPlace> places;
  const auto add = [&](const std::filesystem::path& dir, const std::string& why) {
    const auto normal = dir.lexically_normal();
    for (const auto& p : places)
      if (p.dir == normal) return;
    places.push_back({normal, why});
  };
  const std::filesystem::path share = std::filesystem::path("share") / "ember" / "tokenizers";
  if (!env.tokenizer_dir.empty()) add(env.tokenizer_dir, "$EMBER_TOKENIZER_DIR");
  if (!env.executable.empty()) add(env.executable.parent_path() / ".." / share, "relative to the binary");
  for (const auto& dir : env.package_data) add(dir / "tokenizers", "the installed package (find_package)");
  if (!env.install_prefix.empty()) add(env.install_prefix / share, "the install prefix");
  if (!env.xdg_cache_home.empty())
    add(std::filesystem::path(env.xdg_cache_home) / "ember" / "tokenizers", "the user cache, $XDG_CACHE_HOME");
  else if (!env.home.empty())
    add(std::filesystem::path(env.home) / ".cache" / "ember" / "tokenizers", "the user cache, $HOME/.cache");
  return places;
}

std::filesystem::path find_tokenizer_file(const std::string& file, const std::vector<TokenizerPlace>& places,
                                          const std::string& what) {
  std::string looked;
  for (const auto& p : places) {
    const auto candidate = p.dir / file;
    if (std::filesystem::is_regular_file(candidate)) return candidate;
    looked += (looked.empty() ? "" : ", ") + p.dir.string() + " (" + p.why + ")";
  }
  if (looked.empty()) looked = "nowhere: no $EMBER_TOKENIZER_DIR, binary path, installed package, install prefix or $HOME";
  throw DataError(what + " needs its rank file " + file + ", not found in " + looked +
                  "; set EMBER_TOKENIZER_DIR to a folder holding it (ember ships the published ones in "
                  "third_party/tokenizers, installed as share/ember/tokenizers)");
}

}  // namespace ember
