#include "ember/config/config_source.h"

#include <filesystem>
#include <set>

#include "ember/util/error.h"

namespace ember {
namespace {

// yaml-cpp keeps the last of two equal keys silently; a config that says `steps` twice is a mistake.
void check_unique_keys(const YAML::Node& node, const std::string& prefix, const std::string& origin) {
  if (node.IsSequence())
    for (const auto& item : node) check_unique_keys(item, prefix, origin);
  if (!node.IsMap()) return;
  std::set<std::string> seen;
  for (const auto& kv : node) {
    if (!kv.first.IsScalar())  // `? [a, b]: 1`, `{: 1}`: the readers need a name
      throw ConfigError(origin + ": line " + std::to_string(kv.first.Mark().line + 1) + ": a key" +
                        (prefix.empty() ? "" : " in '" + prefix + "'") + " must be a name, not " +
                        (kv.first.IsNull() ? "empty" : "a list or mapping"));
    const std::string key = kv.first.Scalar();
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    if (key == "<<")
      throw ConfigError(origin + ": line " + std::to_string(kv.first.Mark().line + 1) +
                        ": YAML merge keys ('<<') are not supported; write the keys out, or put the shared part "
                        "in its own file and give both with -c");
    if (!seen.insert(key).second)
      throw ConfigError(origin + ": line " + std::to_string(kv.first.Mark().line + 1) + ": key '" + path +
                        "' appears twice in one mapping");
    check_unique_keys(kv.second, path, origin);
  }
}

}  // namespace

ConfigSource ConfigSource::load(const std::vector<std::string>& files, const std::vector<std::string>& overrides) {
  ConfigSource src;
  for (const auto& file : files) {
    if (!std::filesystem::exists(file)) throw ConfigError("config file '" + file + "' does not exist");
    YAML::Node doc;
    try {
      doc = YAML::LoadFile(file);
    } catch (const YAML::Exception& e) {
      throw ConfigError(file + ": invalid YAML at line " + std::to_string(e.mark.line + 1) + ": " + e.msg);
    }
    if (doc.IsNull()) continue;
    if (!doc.IsMap()) throw ConfigError(file + ": top level must be a mapping of sections");
    check_unique_keys(doc, "", file);
    src.merge(src.root_, doc, "", file);
  }
  for (const auto& o : overrides) src.apply_override(o);
  return src;
}

ConfigSource ConfigSource::from_text(const std::string& yaml_text, const std::string& origin) {
  ConfigSource src;
  YAML::Node doc;
  try {
    doc = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    throw ConfigError(origin + ": invalid YAML at line " + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  if (!doc.IsNull()) {
    if (!doc.IsMap()) throw ConfigError(origin + ": top level must be a mapping of sections");
    check_unique_keys(doc, "", origin);
    src.merge(src.root_, doc, "", origin);
  }
  src.default_origin_ = origin;
  return src;
}

void ConfigSource::merge(YAML::Node into, const YAML::Node& from, const std::string& prefix,
                         const std::string& origin) {
  for (const auto& kv : from) {
    const std::string key = kv.first.as<std::string>();
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    origins_[path] = origin;
    if (kv.second.IsMap() && into[key] && into[key].IsMap()) {
      merge(into[key], kv.second, path, origin);
    } else {
      into[key] = YAML::Clone(kv.second);
    }
  }
}

void ConfigSource::apply_override(const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) throw ConfigError("--set '" + assignment + "': expected key.path=value");
  const std::string path = assignment.substr(0, eq);
  if (eq + 1 == assignment.size())
    throw ConfigError("--set '" + assignment + "': no value after '=' (an empty string is --set \"" + path + "=''\")");
  YAML::Node value;
  try {
    value = YAML::Load(assignment.substr(eq + 1));
  } catch (const YAML::Exception& e) {
    throw ConfigError("--set '" + assignment + "': value is not valid YAML: " + e.msg);
  }
  check_unique_keys(value, path, "--set " + assignment);
  // Build {a: {b: {c: value}}} and merge it like a file.
  std::vector<std::string> keys;
  for (size_t start = 0;; ) {
    const size_t dot = path.find('.', start);
    keys.push_back(path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (keys.back().empty()) throw ConfigError("--set '" + assignment + "': empty key in '" + path + "'");
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  YAML::Node patch = value;
  for (auto key = keys.rbegin(); key != keys.rend(); ++key) {
    YAML::Node wrap(YAML::NodeType::Map);
    wrap[*key] = patch;
    patch = wrap;
  }
  merge(root_, patch, "", "--set " + assignment);
}

std::string ConfigSource::origin_of(const std::string& key_path) const {
  std::string p = key_path;
  while (!p.empty()) {
    auto it = origins_.find(p);
    if (it != origins_.end()) return it->second;
    auto dot = p.rfind('.');
    if (dot == std::string::npos) break;
    p.resize(dot);
  }
  return default_origin_;
}

void SourceChecker::require(bool ok, const std::string& key_path, const std::string& what) const {
  if (!ok) throw ConfigError(src_.origin_of(key_path) + ": " + key_path + ": " + what);
}

}  // namespace ember
