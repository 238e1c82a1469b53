#include "ember/config/yaml_writer.h"

#include <fmt/format.h>

#include <algorithm>

namespace ember {

std::string yaml_float(double value) {
  std::string s = fmt::format("{}", value);                   // shortest round-trip text
  if (s.find_first_of(".ni") != std::string::npos) return s;  // has a point, or inf / nan
  const size_t e = s.find('e');
  return e == std::string::npos ? s + ".0" : s.insert(e, ".0");
}

namespace {

// A string the emitter would write bare but a reader would not read back the same: a control
// character (a trailing carriage return is read as a line break) or spaces at either end. Written
// double-quoted, with escapes.
bool needs_quotes(const std::string& s) {
  if (!s.empty() && (s.front() == ' ' || s.back() == ' ')) return true;
  return std::any_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

void emit_string(YAML::Emitter& out, const std::string& s) {
  if (needs_quotes(s)) out << YAML::DoubleQuoted;
  out << s;
}

}  // namespace

void YamlWriter::field(const char* key, int64_t& value, Bound) { out_ << YAML::Key << key << YAML::Value << value; }

void YamlWriter::field(const char* key, double& value, Bound) {
  out_ << YAML::Key << key << YAML::Value << yaml_float(value);
}

void YamlWriter::field(const char* key, bool& value) { out_ << YAML::Key << key << YAML::Value << value; }

void YamlWriter::field(const char* key, std::string& value) {
  out_ << YAML::Key << key << YAML::Value;
  emit_string(out_, value);
}

void YamlWriter::field(const char* key, std::vector<double>& value, Bound) {
  out_ << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (double x : value) out_ << yaml_float(x);
  out_ << YAML::EndSeq;
}

void YamlWriter::field(const char* key, std::vector<std::string>& value) {
  out_ << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (const auto& s : value) emit_string(out_, s);
  out_ << YAML::EndSeq;
}

void YamlWriter::choice(const char* key, std::string& value, const std::vector<std::string>&) {
  out_ << YAML::Key << key << YAML::Value << value;
}

void YamlWriter::kind_sections(KindSections& sections, const std::vector<std::string>& used) {
  for (const auto& kind : used)
    if (KindOptions* opts = sections.find(kind))
      section_with(kind.c_str(), [opts](FieldVisitor& v) { opts->fields(v); });
}

void YamlWriter::section_with(const char* key, const std::function<void(FieldVisitor&)>& body) {
  out_ << YAML::Key << key << YAML::Value << YAML::BeginMap;
  body(*this);
  out_ << YAML::EndMap;
}

bool YamlWriter::hashes_as_absent(const std::function<void(FieldVisitor&)>& current,
                                  const std::function<void(FieldVisitor&)>& legacy) {
  if (!legacy_absent_) return false;
  const auto text = [](const std::function<void(FieldVisitor&)>& body) {
    YAML::Emitter out;
    out << YAML::BeginMap;
    YamlWriter writer(out, true);
    body(writer);
    out << YAML::EndMap;
    return std::string(out.c_str());
  };
  return text(current) == text(legacy);
}

}  // namespace ember
