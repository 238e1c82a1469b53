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

namespace {

// `text` without the block that starts with the line `header` (and its more indented lines).
std::string without_block(const std::string& text, const std::string& header) {
  const size_t start = text.find("\n" + header + "\n");
  if (start == std::string::npos) return text;
  const size_t indent = header.find_first_not_of(' ');
  size_t end = start + header.size() + 2;
  while (end < text.size() && text.find_first_not_of(' ', end) - end > indent) {
    const size_t newline = text.find('\n', end);
    end = newline == std::string::npos ? text.size() : newline + 1;
  }
  return text.substr(0, start + 1) + text.substr(end);
}

}  // namespace

// Keys added since a model was trained must not change its hash while they select the behaviour
// it was trained with: without RoPE scaling, the text hashed is what ember wrote before
// model.mixer.rope_scaling existed, and a Titans memory without inner gradient clipping (0) hashes
// as before model.mixer.titans.inner_grad_clip existed (so checkpoints from then still resume,
// with --set model.mixer.titans.inner_grad_clip=0); the same for Hope-attention's CMS levels. A Titans
// memory with its residual, the plain inner step and the MLP form (the only ones before
// memory_residual, inner_step and memory) hashes as before.
std::string model_hash(const ModelConfig& m) {
  std::string text = section_yaml(m);
  if (m.mixer.rope_scaling.type == RopeScalingType::none) text = without_block(text, "  rope_scaling:");
  text = without_block(text, "    inner_grad_clip: 0.0");  // model.mixer.{titans,hope_attention}.*
  text = without_block(text, "    memory_residual: true");  // model.mixer.titans.*
  text = without_block(text, "    inner_step: plain");
  text = without_block(text, "    memory: mlp");
  return sha256_hex(text);
}

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
