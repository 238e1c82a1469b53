// Reads a component's keys from a YAML map, validating types and bounds, and rejecting unknown
// keys with a "did you mean" suggestion. Errors name the file (or --set), the key path and what
// was expected.
#pragma once
#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "ember/config/config_source.h"
#include "ember/config/fields.h"

namespace ember {

class YamlReader final : public FieldVisitor {
 public:
  YamlReader(YAML::Node node, std::string path, const ConfigSource& src);

  void field(const char* key, int64_t& out, Bound b = {}) override;
  void field(const char* key, double& out, Bound b = {}) override;
  void field(const char* key, bool& out) override;
  void field(const char* key, std::string& out) override;
  void field(const char* key, std::vector<double>& out, Bound b = {}) override;
  void field(const char* key, std::vector<std::string>& out) override;
  void choice(const char* key, std::string& out, const std::vector<std::string>& options) override;
  using FieldVisitor::choice;
  void kind_sections(KindSections& sections, const std::vector<std::string>& used) override;
  void moved(const char* old_key, const char* new_place) override;
  // Unknown keys in this map are errors.
  void finish() const;

 protected:
  void section_with(const char* key, const std::function<void(FieldVisitor&)>& body) override;

 private:
  YAML::Node lookup(const char* key);
  std::string join(const std::string& key) const;
  [[noreturn]] void fail(const std::string& key, const std::string& what) const;
  std::string scalar_of(const char* key, const YAML::Node& n) const;
  void check_bound(const char* key, double x, const Bound& b) const;

  YAML::Node node_;
  std::string path_;
  const ConfigSource& src_;
  std::vector<std::string> known_;
};

}  // namespace ember
