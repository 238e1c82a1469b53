// Where tokenizer presets look for their rank files (data/tokenizer_search.h): the order of the
// places, what is skipped or merged, the first hit winning, an error naming every place looked,
// and the build tree's own data found with an empty HOME.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "ember/data/tokenizer_presets.h"
#include "ember/data/tokenizer_search.h"
#include "ember/util/error.h"
#include "ember/util/package_data.h"

namespace tokenizer_search {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> dirs_of(const std::vector<ember::TokenizerPlace>& places) {
  std::vector<std::string> out;
  for (const auto& p : places) out.push_back(p.dir.string());
  return out;
}

// A fresh folder under the system temp dir, removed with the object.
struct ScratchDir {
  fs::path path = fs::temp_directory_path() /
                  ("ember_tokenizer_search_" + std::to_string(::getpid()) + "_" +
                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
  ScratchDir() {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~ScratchDir() { fs::remove_all(path); }
};

// Sets (or, with nullptr, unsets) an environment variable for one scope.
struct EnvVar {
  std::string name;
  std::optional<std::string> old;
  EnvVar(const char* n, const char* value) : name(n) {
    if (const char* v = std::getenv(n)) old = v;
    value ? setenv(n, value, 1) : unsetenv(n);
  }
  ~EnvVar() { old ? setenv(name.c_str(), old->c_str(), 1) : unsetenv(name.c_str()); }
};

TEST(TokenizerSearch, OrderIsEnvThenBinaryThenPrefixThenCache) {
  ember::TokenizerSearchEnv env{"/env/tok", "/xdg", "/home/u", "/opt/ember/bin/ember", "/usr/local"};
  const auto places = ember::tokenizer_search_dirs(env);
  EXPECT_EQ(dirs_of(places), (std::vector<std::string>{"/env/tok", "/opt/ember/share/ember/tokenizers",
                                                       "/usr/local/share/ember/tokenizers", "/xdg/ember/tokenizers"}));
  EXPECT_EQ(places[0].why, "$EMBER_TOKENIZER_DIR");
  EXPECT_EQ(places[3].why, "the user cache, $XDG_CACHE_HOME");
  env.xdg_cache_home.clear();  // without XDG_CACHE_HOME: ~/.cache
  EXPECT_EQ(dirs_of(ember::tokenizer_search_dirs(env)).back(), "/home/u/.cache/ember/tokenizers");
}

// A program built against an installed package (its CMake package registers share/ember) looks
// there after its own folder and before the prefix ember was configured with.
TEST(TokenizerSearch, TheInstalledPackageComesAfterTheBinaryAndBeforeThePrefix) {
  ember::TokenizerSearchEnv env{"", "", "/home/u", "/work/app/build/app", "/usr/local", {"/opt/moved/share/ember"}};
  const auto places = ember::tokenizer_search_dirs(env);
  EXPECT_EQ(dirs_of(places),
            (std::vector<std::string>{"/work/app/share/ember/tokenizers", "/opt/moved/share/ember/tokenizers",
                                      "/usr/local/share/ember/tokenizers", "/home/u/.cache/ember/tokenizers"}));
  EXPECT_EQ(places[1].why, "the installed package (find_package)");
}

TEST(TokenizerSearch, RegisteredPackageDataIsInThisProcesssSearch) {
  ember::register_package_data_dir("/opt/registered/share/ember/");
  ember::register_package_data_dir("/opt/registered/share/ember");  // once, however often registered
  const auto env = ember::tokenizer_search_env();
  EXPECT_EQ(std::count(env.package_data.begin(), env.package_data.end(), fs::path("/opt/registered/share/ember")),
            1);
  const auto dirs = dirs_of(ember::tokenizer_search_dirs(env));
  EXPECT_NE(std::find(dirs.begin(), dirs.end(), "/opt/registered/share/ember/tokenizers"), dirs.end());
}

TEST(TokenizerSearch, UnsetPlacesAreSkippedAndRepeatsMerged) {
  EXPECT_TRUE(ember::tokenizer_search_dirs({}).empty());
  // The installed binary in the configured prefix: its own folder and the prefix's are one place.
  const ember::TokenizerSearchEnv env{"", "", "", "/usr/local/bin/ember", "/usr/local"};
  EXPECT_EQ(dirs_of(ember::tokenizer_search_dirs(env)), (std::vector<std::string>{"/usr/local/share/ember/tokenizers"}));
}

TEST(TokenizerSearch, FirstPlaceHoldingTheFileWins) {
  ScratchDir s;
  for (const char* d : {"a", "b", "c"}) fs::create_directories(s.path / d);
  for (const char* d : {"b", "c"}) std::ofstream(s.path / d / "x.tiktoken") << "QQ== 0\n";
  const std::vector<ember::TokenizerPlace> places = {{s.path / "a", "first"}, {s.path / "b", "second"},
                                                     {s.path / "c", "third"}};
  EXPECT_EQ(ember::find_tokenizer_file("x.tiktoken", places, "test"), s.path / "b" / "x.tiktoken");
}

TEST(TokenizerSearch, ErrorNamesEveryPlaceLooked) {
  ScratchDir s;
  const std::vector<ember::TokenizerPlace> places = {{s.path / "a", "first"}, {s.path / "b", "second"}};
  try {
    ember::find_tokenizer_file("x.tiktoken", places, "tokenizer: preset 'x'");
    FAIL() << "expected a DataError";
  } catch (const ember::DataError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("tokenizer: preset 'x' needs its rank file x.tiktoken, not found in " +
                        (s.path / "a").string() + " (first), " + (s.path / "b").string() + " (second)"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("EMBER_TOKENIZER_DIR"), std::string::npos) << what;
  }
}

TEST(TokenizerSearch, ProcessEnvironmentIsRead) {
  EnvVar dir("EMBER_TOKENIZER_DIR", "/some/dir");
  EnvVar xdg("XDG_CACHE_HOME", nullptr);
  EnvVar home("HOME", "/home/someone");
  const auto env = ember::tokenizer_search_env();
  EXPECT_EQ(env.tokenizer_dir, "/some/dir");
  EXPECT_EQ(env.xdg_cache_home, "");
  EXPECT_EQ(env.home, "/home/someone");
  EXPECT_EQ(env.executable, fs::read_symlink("/proc/self/exe"));
  EXPECT_FALSE(env.install_prefix.empty());
}

// The unit tests live in <build>/tests, so <build>/share/ember/tokenizers (a link to
// third_party/tokenizers) is found relative to the binary, whatever HOME is.
TEST(TokenizerSearch, BuildTreeDataNeedsNoHome) {
  ScratchDir s;
  EnvVar dir("EMBER_TOKENIZER_DIR", nullptr);
  EnvVar xdg("XDG_CACHE_HOME", nullptr);
  EnvVar home("HOME", s.path.c_str());
  const auto spec = ember::tokenizer_preset("r50k_base");
  EXPECT_EQ(fs::canonical(spec.ranks_file.parent_path()),
            fs::canonical(fs::read_symlink("/proc/self/exe").parent_path() / ".." / "share" / "ember" / "tokenizers"));
}

}  // namespace
}  // namespace tokenizer_search
