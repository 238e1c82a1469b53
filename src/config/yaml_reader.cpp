#include "ember/config/yaml_reader.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <cmath>

#include "ember/util/error.h"
#include "ember/util/suggest.h"

namespace ember {

YamlReader::YamlReader(YAML::Node node, std::string path, const ConfigSource& src)
    : node_(std::move(node)), path_(std::move(path)), src_(src) {}

std::string YamlReader::join(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

void YamlReader::fail(const std::string& key, const std::string& what) const {
  throw ConfigError(src_.origin_of(join(key)) + ": " + join(key) + ": " + what);
}

YAML::Node YamlReader::lookup(const char* key) {
  known_.emplace_back(key);
  const YAML::Node& cnode = node_;  // const access never inserts
  return cnode[key];
}

std::string YamlReader::scalar_of(const char* key, const YAML::Node& n) const {
  if (!n.IsScalar()) fail(key, "expected a single value, got a list or mapping");
  return n.Scalar();
}

void YamlReader::check_bound(const char* key, double x, const Bound& b) const {
  if (!std::isfinite(x)) fail(key, fmt::format("expected a finite number, got {}", x));
  if (b.text && !b.admits(x)) fail(key, fmt::format("expected a value {}, got {}", b.text, x));
}

void YamlReader::field(const char* key, int64_t& out, Bound b) {
  YAML::Node n = lookup(key);
  if (!n) return;
  std::string s = scalar_of(key, n);
  try {
    out = n.as<int64_t>();
  } catch (const YAML::Exception&) {
    fail(key, "expected an integer, got '" + s + "'");
  }
  check_bound(key, static_cast<double>(out), b);
}

void YamlReader::field(const char* key, double& out, Bound b) {
  YAML::Node n = lookup(key);
  if (!n) return;
  std::string s = scalar_of(key, n);
  try {
    out = n.as<double>();
  } catch (const YAML::Exception&) {
    fail(key, "expected a number, got '" + s + "'");
  }
  check_bound(key, out, b);
}

void YamlReader::field(const char* key, bool& out) {
  YAML::Node n = lookup(key);
  if (!n) return;
  std::string s = scalar_of(key, n);
  try {
    out = n.as<bool>();
  } catch (const YAML::Exception&) {
    fail(key, "expected true or false, got '" + s + "'");
  }
}

void YamlReader::field(const char* key, std::string& out) {
  YAML::Node n = lookup(key);
  if (!n) return;
  out = n.IsNull() ? std::string() : scalar_of(key, n);
}

void YamlReader::field(const char* key, std::vector<double>& out, Bound b) {
  YAML::Node n = lookup(key);
  if (!n) return;
  if (!n.IsSequence()) fail(key, "expected a list of numbers");
  out.clear();
  for (const auto& item : n) {
    try {
      out.push_back(item.as<double>());
    } catch (const YAML::Exception&) {
      fail(key, "expected a list of numbers, found '" + (item.IsScalar() ? item.Scalar() : "?") + "'");
    }
    check_bound(key, out.back(), b);
  }
}

void YamlReader::field(const char* key, std::vector<std::string>& out) {
  YAML::Node n = lookup(key);
  if (!n) return;
  out.clear();
  if (n.IsScalar()) {
    out.push_back(n.Scalar());
    return;
  }
  if (!n.IsSequence()) fail(key, "expected a list of strings");
  for (const auto& item : n) out.push_back(scalar_of(key, item));
}

void YamlReader::choice(const char* key, std::string& out, const std::vector<std::string>& options) {
  YAML::Node n = lookup(key);
  if (!n) return;
  std::string s = scalar_of(key, n);
  for (const auto& o : options)
    if (o == s) {
      out = s;
      return;
    }
  std::string list = fmt::format("{}", fmt::join(options, " | "));
  std::string near = closest_match(s, options);
  fail(key, "expected one of " + list + ", got '" + s + "'" + (near.empty() ? "" : " (did you mean '" + near + "'?)"));
}

void YamlReader::section_with(const char* key, const std::function<void(FieldVisitor&)>& body) {
  YAML::Node child = lookup(key);
  if (!child) return;
  if (!child.IsMap()) fail(key, "expected a mapping of keys");
  YamlReader sub(child, join(key), src_);
  body(sub);
  sub.finish();
}

void YamlReader::kind_sections(KindSections& sections, const std::vector<std::string>& used) {
  for (const auto& [kind, opts] : sections.all()) {
    KindOptions* options = opts.get();
    section_with(kind.c_str(), [options](FieldVisitor& v) { options->fields(v); });
  }
}

void YamlReader::moved(const char* old_key, const char* new_place) {
  const YAML::Node& cnode = node_;
  if (cnode[old_key]) fail(old_key, std::string("this key moved to ") + new_place);
}

void YamlReader::finish() const {
  for (const auto& kv : node_) {
    std::string key = kv.first.as<std::string>();
    if (std::find(known_.begin(), known_.end(), key) != known_.end()) continue;
    std::string near = closest_match(key, known_);
    throw ConfigError(src_.origin_of(join(key)) + ": unknown key '" + join(key) + "'" +
                      (near.empty() ? "" : " (did you mean '" + join(near) + "'?)"));
  }
}

}  // namespace ember
