// Where tokenizer presets find their rank files (<name>.tiktoken), in this order:
//   1. $EMBER_TOKENIZER_DIR
//   2. <folder of the running binary>/../share/ember/tokenizers: an install's bin/ember, or the
//      build tree's tools/ember and tests/ (the build links <build>/share/ember/tokenizers to
//      third_party/tokenizers)
//   3. <share/ember>/tokenizers of the installed package a program was built against: a program
//      that links the installed library (its CMake package registers the folder, found relative to
//      the package, so a moved prefix works: util/package_data.h)
//   4. <install prefix>/share/ember/tokenizers, the prefix ember was configured with
//   5. the user cache: $XDG_CACHE_HOME/ember/tokenizers, else $HOME/.cache/ember/tokenizers
// A pure function of its inputs (tokenizer_search_dirs), so the order is testable.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace ember {

// The inputs of the search, as the process sees them; empty strings and paths are unset.
struct TokenizerSearchEnv {
  std::string tokenizer_dir;             // $EMBER_TOKENIZER_DIR
  std::string xdg_cache_home;            // $XDG_CACHE_HOME
  std::string home;                      // $HOME
  std::filesystem::path executable;      // the running binary (/proc/self/exe)
  std::filesystem::path install_prefix;  // CMAKE_INSTALL_PREFIX when ember was configured
  std::vector<std::filesystem::path> package_data;  // installed share/ember folders (util/package_data.h)
};

// One folder to look in and why it is on the list (for the error that lists them).
struct TokenizerPlace {
  std::filesystem::path dir;
  std::string why;
};

// This process's environment, executable, registered package data and compiled-in install prefix.
TokenizerSearchEnv tokenizer_search_env();
// The folders in search order (above), each once.
std::vector<TokenizerPlace> tokenizer_search_dirs(const TokenizerSearchEnv& env);
// The first place holding `file`; a DataError naming `what` and every place looked otherwise.
std::filesystem::path find_tokenizer_file(const std::string& file, const std::vector<TokenizerPlace>& places,
                                          const std::string& what);

}  // namespace ember
