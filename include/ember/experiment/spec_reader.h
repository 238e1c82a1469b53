// What the sweep and ladder files share (docs/experiments.md): reading YAML values with errors that
// name the file and key, "key=value" overrides, members named one by one, seeds, directory-safe names.
#pragma once
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>
#include <vector>

namespace ember {

class SpecReader {
 public:
  explicit SpecReader(std::string file) : file_(std::move(file)) {}
  const std::string& file() const { return file_; }

  // ConfigError "<file>: <key>: <what>".
  [[noreturn]] void fail(const std::string& key, const std::string& what) const;
  std::string scalar(const YAML::Node& n, const std::string& key) const;
  std::vector<std::string> strings(const YAML::Node& n, const std::string& key) const;
  // A map of dotted keys to values, as --set overrides ("key=value"; a list becomes [a, b]).
  std::vector<std::string> overrides(const YAML::Node& n, const std::string& key) const;
  static std::string value_text(const YAML::Node& n);
  // Every key of `map` must be one of `keys` (else an error with a did-you-mean); `where` prefixes it.
  void only(const YAML::Node& map, const std::string& where, const std::vector<std::string>& keys) const;
  // A whole integer >= lowest ("1.5", "2x", "many" are not).
  int64_t integer(const YAML::Node& n, const std::string& key, int64_t lowest) const;
  int64_t integer(const std::string& text, const std::string& key, int64_t lowest) const;
  // A finite number > 0 (1e6 and 1000000 alike).
  double positive(const YAML::Node& n, const std::string& key) const;

 private:
  std::string file_;
};

// The YAML file's root map; UsageError when it is missing, ConfigError when it is not YAML or not a map.
YAML::Node load_spec_file(const std::string& path, const char* what);

struct ListedMember {
  std::string name;
  std::vector<std::string> configs, overrides;
};
// members: [{name, configs, set}, ...].
std::vector<ListedMember> read_listed_members(const SpecReader& r, const YAML::Node& members);
// seeds: [1, 2] (or one seed); each listed once.
std::vector<int64_t> read_seeds(const SpecReader& r, const YAML::Node& seeds);

// Characters safe in a directory name; everything else becomes '-'.
std::string safe_name(const std::string& text);

}  // namespace ember
