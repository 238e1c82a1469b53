// The merged YAML tree of several -c files and --set overrides, remembering where each key came
// from so errors can name the file.
#pragma once
#include <yaml-cpp/yaml.h>

#include <map>
#include <string>
#include <vector>

#include "ember/config/fields.h"

namespace ember {

class ConfigSource {
 public:
  // Later files win; then each override "a.b.c=value" (value parsed as YAML) is applied.
  static ConfigSource load(const std::vector<std::string>& files, const std::vector<std::string>& overrides);
  static ConfigSource from_text(const std::string& yaml_text, const std::string& origin);

  const YAML::Node& root() const { return root_; }
  // The file or --set that set this key (or the nearest enclosing one).
  std::string origin_of(const std::string& key_path) const;

 private:
  void merge(YAML::Node into, const YAML::Node& from, const std::string& prefix, const std::string& origin);
  void apply_override(const std::string& assignment);

  YAML::Node root_ = YAML::Node(YAML::NodeType::Map);
  std::map<std::string, std::string> origins_;
  std::string default_origin_ = "defaults";  // for keys no file or --set gave
};

class SourceChecker : public ConfigChecker {
 public:
  explicit SourceChecker(const ConfigSource& src) : src_(src) {}
  void require(bool ok, const std::string& key_path, const std::string& what) const override;
  std::string origin(const std::string& key_path) const override { return src_.origin_of(key_path); }

 private:
  const ConfigSource& src_;
};

}  // namespace ember
