// The user's cache folder for what ember measures once per machine: $XDG_CACHE_HOME/ember/<what>,
// else $HOME/.cache/ember/<what>, else <tmp>/ember-<what>.
#pragma once
#include <filesystem>
#include <string>

namespace ember {

std::filesystem::path user_cache_dir(const std::string& what);

}  // namespace ember
