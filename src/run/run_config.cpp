#include "ember/run/run_config.h"

#include <fmt/format.h>

#include <map>

#include "ember/config/yaml_reader.h"
#include "ember/config/yaml_writer.h"
#include "ember/util/sha256.h"

namespace ember {
namespace {

Config from_source(const ConfigSource& src) {
  Config cfg;
  YamlReader reader(src.root(), "", src);
  cfg.fields(reader);
  reader.finish();
  SourceChecker checker(src);
  cfg.model.check(checker);
  cfg.optim.check(checker);
  cfg.distributed.check(checker);
  checker.require(cfg.train.seq_len <= cfg.model.max_seq_len, "train.seq_len",
                  fmt::format("seq_len = {} exceeds model.max_seq_len = {}", cfg.train.seq_len, cfg.model.max_seq_len));
  checker.require(cfg.optim.warmup_steps <= cfg.train.steps, "optim.warmup_steps",
                  fmt::format("warmup_steps = {} exceeds train.steps = {}", cfg.optim.warmup_steps, cfg.train.steps));
  return cfg;
}

}  // namespace

Config load_config(const std::vector<std::string>& files, const std::vector<std::string>& overrides) {
  return from_source(ConfigSource::load(files, overrides));
}

Config parse_config_text(const std::string& yaml_text, const std::string& origin) {
  return from_source(ConfigSource::from_text(yaml_text, origin));
}

std::string to_yaml(const Config& cfg) { return section_yaml(cfg); }

std::string config_hash(const Config& cfg) { return sha256_hex(to_yaml(cfg)); }

// The text hashed leaves out the keys added after checkpoints were written while they hold their
// legacy value (config/fields.h, added_field): RoPE scaling, Titans' memory form, residual, inner
// step and inner clip, Hope-attention's inner clip. A model that does what it did before a key
// existed hashes as it did then, so its checkpoints still resume.
std::string model_hash(const ModelConfig& m) { return sha256_hex(section_yaml(m, /*legacy_absent=*/true)); }

namespace {

void flatten(const YAML::Node& node, const std::string& path, std::map<std::string, std::string>& out) {
  if (node.IsMap()) {
    for (const auto& kv : node) flatten(kv.second, path + "." + kv.first.Scalar(), out);
    return;
  }
  YAML::Emitter e;
  e << YAML::Flow << node;
  out[path] = e.c_str();
}

}  // namespace

std::vector<std::string> changed_keys(const std::string& old_yaml, const std::string& new_yaml,
                                      const std::string& section) {
  std::map<std::string, std::string> a, b;
  flatten(YAML::Load(old_yaml)[section], section, a);
  flatten(YAML::Load(new_yaml)[section], section, b);
  std::vector<std::string> out;
  for (const auto& [key, value] : b) {
    auto it = a.find(key);
    if (it == a.end() || it->second != value)
      out.push_back(key + ": " + (it == a.end() ? "(none)" : it->second) + " -> " + value);
  }
  for (const auto& [key, value] : a)
    if (!b.count(key)) out.push_back(key + ": " + value + " -> (none)");
  return out;
}

}  // namespace ember
