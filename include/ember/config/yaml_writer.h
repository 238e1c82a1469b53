// Writes a component's keys (the same fields() list the reader uses) as YAML: the resolved config.
#pragma once
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "ember/config/fields.h"

namespace ember {

class YamlWriter {
 public:
  explicit YamlWriter(YAML::Emitter& out) : out_(out) {}

  template <class T>
  void field(const char* key, const T& value, Bound = {}) {
    out_ << YAML::Key << key << YAML::Value << value;
  }
  // Shortest text that reads back to the same double (fmt's round-trip formatting).
  void field(const char* key, const double& value, Bound = {}) {
    out_ << YAML::Key << key << YAML::Value << fmt::format("{}", value);
  }
  void field(const char* key, const std::vector<double>& v, Bound = {}) {
    out_ << YAML::Key << key << YAML::Value << YAML::Flow << v;
  }
  void field(const char* key, const std::vector<std::string>& v, Bound = {}) {
    out_ << YAML::Key << key << YAML::Value << YAML::Flow << v;
  }
  void choice(const char* key, const std::string& value, const std::vector<std::string>&) {
    out_ << YAML::Key << key << YAML::Value << value;
  }
  template <class Section>
  void section(const char* key, Section& s) {
    out_ << YAML::Key << key << YAML::Value << YAML::BeginMap;
    s.fields(*this);
    out_ << YAML::EndMap;
  }

 private:
  YAML::Emitter& out_;
};

}  // namespace ember
