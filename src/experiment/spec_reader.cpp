#include "ember/experiment/spec_reader.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

#include "ember/util/error.h"
#include "ember/util/suggest.h"

namespace ember {

void SpecReader::fail(const std::string& key, const std::string& what) const {
  throw ConfigError(file_ + ": " + key + ": " + what);
}

std::string SpecReader::scalar(const YAML::Node& n, const std::string& key) const {
  if (!n.IsScalar()) fail(key, "expected a single value");
  return n.Scalar();
}

std::vector<std::string> SpecReader::strings(const YAML::Node& n, const std::string& key) const {
  if (n.IsScalar()) return {n.Scalar()};
  if (!n.IsSequence()) fail(key, "expected a list");
  std::vector<std::string> out;
  for (size_t i = 0; i < n.size(); ++i) out.push_back(scalar(n[i], key + "[" + std::to_string(i) + "]"));
  return out;
}

std::vector<std::string> SpecReader::overrides(const YAML::Node& n, const std::string& key) const {
  if (!n.IsMap()) fail(key, "expected a map of config keys to values, e.g. {train.steps: 300}");
  std::vector<std::string> out;
  for (const auto& kv : n) out.push_back(kv.first.Scalar() + "=" + value_text(kv.second));
  return out;
}

std::string SpecReader::value_text(const YAML::Node& n) {
  if (n.IsScalar()) return n.Scalar();
  YAML::Emitter e;
  e << YAML::Flow << n;
  return e.c_str();
}

void SpecReader::only(const YAML::Node& map, const std::string& where, const std::vector<std::string>& keys) const {
  for (const auto& kv : map) {
    const auto key = kv.first.Scalar();
    if (std::find(keys.begin(), keys.end(), key) != keys.end()) continue;
    const auto near = closest_match(key, keys);
    fail(where + key, "unknown key" + (near.empty() ? "" : " (did you mean '" + near + "'?)"));
  }
}

int64_t SpecReader::integer(const std::string& text, const std::string& key, int64_t lowest) const {
  size_t used = 0;
  int64_t v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size()) fail(key, "'" + text + "' is not an integer");
  if (v < lowest) fail(key, "must be >= " + std::to_string(lowest) + ", got " + text);
  return v;
}

int64_t SpecReader::integer(const YAML::Node& n, const std::string& key, int64_t lowest) const {
  return integer(scalar(n, key), key, lowest);
}

double SpecReader::positive(const YAML::Node& n, const std::string& key) const {
  const auto text = scalar(n, key);
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size()) fail(key, "'" + text + "' is not a number");
  if (!std::isfinite(v) || v <= 0) fail(key, "must be > 0, got " + text);
  return v;
}

YAML::Node load_spec_file(const std::string& path, const char* what) {
  if (!std::filesystem::is_regular_file(path)) throw UsageError(std::string(what) + " file '" + path + "' not found");
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    throw ConfigError(path + ": not valid YAML: " + e.what());
  }
  if (!root.IsMap()) SpecReader(path).fail("(top level)", "expected a map");
  return root;
}

std::vector<ListedMember> read_listed_members(const SpecReader& r, const YAML::Node& members) {
  if (!members.IsSequence()) r.fail("members", "expected a list of {name, configs, set}");
  std::vector<ListedMember> out;
  for (size_t i = 0; i < members.size(); ++i) {
    const auto& m = members[i];
    const std::string where = "members[" + std::to_string(i) + "]";
    if (!m.IsMap() || !m["name"]) r.fail(where, "expected a map with a name");
    r.only(m, where + ".", {"name", "configs", "set"});
    ListedMember listed{r.scalar(m["name"], where + ".name"), {}, {}};
    if (m["configs"]) listed.configs = r.strings(m["configs"], where + ".configs");
    if (m["set"]) listed.overrides = r.overrides(m["set"], where + ".set");
    out.push_back(std::move(listed));
  }
  return out;
}

std::vector<int64_t> read_seeds(const SpecReader& r, const YAML::Node& seeds) {
  std::vector<int64_t> out;
  for (const auto& s : r.strings(seeds, "seeds")) {
    out.push_back(r.integer(s, "seeds", std::numeric_limits<int64_t>::min()));
    if (std::count(out.begin(), out.end(), out.back()) > 1) r.fail("seeds", "seed " + s + " is listed twice");
  }
  return out;
}

std::string safe_name(const std::string& text) {
  std::string out;
  for (char c : text) out += std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_' ? c : '-';
  return out;
}

}  // namespace ember
