// Writes a component's keys (the same fields() list the reader uses) as YAML: the resolved config.
// Numbers are written so that every YAML reader, YAML 1.1 ones such as PyYAML included, reads them
// back as numbers of the same value.
#pragma once
#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "ember/config/fields.h"

namespace ember {

// Shortest text that reads back to the same double, always with a '.' (1.0e-06, 10000.0): YAML 1.1
// reads "1e-06" as a string.
std::string yaml_float(double value);

class YamlWriter final : public FieldVisitor {
 public:
  // legacy_absent: leave out keys added later while they hold their legacy value (fields.h,
  // added_field): the text the model hash is taken of.
  explicit YamlWriter(YAML::Emitter& out, bool legacy_absent = false) : out_(out), legacy_absent_(legacy_absent) {}

  void field(const char* key, int64_t& value, Bound = {}) override;
  void field(const char* key, double& value, Bound = {}) override;
  void field(const char* key, bool& value) override;
  void field(const char* key, std::string& value) override;
  void field(const char* key, std::vector<double>& value, Bound = {}) override;
  void field(const char* key, std::vector<std::string>& value) override;
  void choice(const char* key, std::string& value, const std::vector<std::string>&) override;
  using FieldVisitor::choice;
  void kind_sections(KindSections& sections, const std::vector<std::string>& used) override;

 protected:
  void section_with(const char* key, const std::function<void(FieldVisitor&)>& body) override;
  bool hashes_as_absent(const std::function<void(FieldVisitor&)>& current,
                        const std::function<void(FieldVisitor&)>& legacy) override;

 private:
  YAML::Emitter& out_;
  bool legacy_absent_ = false;
};

// The YAML text of one section struct as a mapping; legacy_absent as YamlWriter's.
template <class Section>
std::string section_yaml(Section s, bool legacy_absent = false) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  YamlWriter writer(out, legacy_absent);
  s.fields(writer);
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace ember
