// Where an installed ember's data (share/ember: the tokenizer rank files) is, for programs other
// than bin/ember that link the library. ember's CMake package adds a small generated source to each
// such program that registers <prefix>/share/ember at start-up, the prefix being where
// find_package found the package, so a moved install works too (cmake/emberConfig.cmake.in). The
// searches for data files read the list (data/tokenizer_search.h).
#pragma once
#include <filesystem>
#include <vector>

namespace ember {

// Records `dir`, an installed share/ember; returns true so that a static initialiser can call it.
bool register_package_data_dir(const char* dir);
std::vector<std::filesystem::path> package_data_dirs();  // in the order registered, each once

}  // namespace ember
