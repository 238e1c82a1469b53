#include "ember/experiment/ladder_spec.h"

#include <fmt/format.h>

#include <cmath>
#include <set>

#include "ember/util/error.h"

namespace ember {
namespace {

std::string default_size_name(const LadderSize& s) {
  if (s.params > 0) return fmt::format("p{:.3g}", s.params);
  return fmt::format("d{}l{}", s.d_model, s.n_layers);
}

void read_sizes(const SpecReader& r, const YAML::Node& sizes, LadderSpec& spec) {
  if (!sizes.IsSequence()) r.fail("sizes", "expected a list of {d_model, n_layers} or {params}");
  std::set<std::string> names;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const auto& s = sizes[i];
    const std::string where = "sizes[" + std::to_string(i) + "]";
    if (!s.IsMap()) r.fail(where, "expected a map: {d_model: 256, n_layers: 4} or {params: 2.0e6}");
    r.only(s, where + ".", {"name", "d_model", "n_layers", "params"});
    LadderSize size;
    if (s["params"]) {
      if (s["d_model"] || s["n_layers"]) r.fail(where, "give either params or d_model and n_layers, not both");
      size.params = r.positive(s["params"], where + ".params");
    } else {
      if (!s["d_model"] || !s["n_layers"]) r.fail(where, "expected both d_model and n_layers (or params)");
      size.d_model = r.integer(s["d_model"], where + ".d_model", 1);
      size.n_layers = r.integer(s["n_layers"], where + ".n_layers", 1);
    }
    size.name = s["name"] ? safe_name(r.scalar(s["name"], where + ".name")) : default_size_name(size);
    if (!names.insert(size.name).second) r.fail(where + ".name", "two sizes are both named '" + size.name + "'");
    spec.sizes.push_back(size);
  }
  if (spec.sizes.size() < 3)
    r.fail("sizes", fmt::format("a ladder needs at least 3 sizes to fit E, A and alpha, got {}", spec.sizes.size()));
}

void read_rules(const SpecReader& r, const YAML::Node& rules, LadderRules& out) {
  if (!rules.IsMap()) r.fail("rules", "expected a map, e.g. {head_dim: 64, d_ff_ratio: 2.75, aspect: 64}");
  r.only(rules, "rules.", {"head_dim", "d_ff_ratio", "d_ff_multiple", "aspect"});
  if (rules["head_dim"]) out.head_dim = r.integer(rules["head_dim"], "rules.head_dim", 1);
  if (rules["d_ff_ratio"]) out.d_ff_ratio = r.positive(rules["d_ff_ratio"], "rules.d_ff_ratio");
  if (rules["d_ff_multiple"]) out.d_ff_multiple = r.integer(rules["d_ff_multiple"], "rules.d_ff_multiple", 1);
  if (rules["aspect"]) out.aspect = r.positive(rules["aspect"], "rules.aspect");
}

void read_tokens(const SpecReader& r, const YAML::Node& tokens, LadderSpec& spec) {
  if (!tokens.IsMap() || tokens.size() != 1)
    r.fail("tokens", "expected one of {per_param: 20} (tokens = 20 x N) or {fixed: 2.0e9}");
  r.only(tokens, "tokens.", {"per_param", "fixed"});
  if (tokens["per_param"]) spec.tokens_per_param = r.positive(tokens["per_param"], "tokens.per_param");
  if (tokens["fixed"]) spec.tokens_fixed = r.positive(tokens["fixed"], "tokens.fixed");
}

void read_target(const SpecReader& r, const YAML::Node& target, LadderSpec& spec) {
  const auto text = r.scalar(target, "target");
  size_t used = 0;
  try {
    (void)std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == text.size() && used > 0) {
    spec.target_params = r.positive(target, "target");
    return;
  }
  spec.target_config = text;  // a config file, checked when the plan resolves it
}

void read_members_and_baseline(const SpecReader& r, const YAML::Node& root, LadderSpec& spec) {
  if (!root["members"]) r.fail("members", "missing: the members to compare, e.g. [{name: tied, configs: [...]}]");
  spec.members = read_listed_members(r, root["members"]);
  if (spec.members.empty()) r.fail("members", "expected at least one member");
  std::set<std::string> names;
  for (auto& m : spec.members) {
    m.name = safe_name(m.name);
    if (!names.insert(m.name).second) r.fail("members", "two members are both named '" + m.name + "'");
  }
  if (root["baseline"]) {
    spec.baseline = safe_name(r.scalar(root["baseline"], "baseline"));
    if (!names.count(spec.baseline)) r.fail("baseline", "no member named '" + spec.baseline + "'");
  }
}

}  // namespace

LadderSpec load_ladder(const std::string& path) {
  const YAML::Node root = load_spec_file(path, "ladder");
  SpecReader r(path);
  r.only(root, "", {"out", "configs", "set", "sizes", "rules", "tokens", "warmup", "members", "seeds", "baseline",
                    "count", "target", "eval_batches", "bootstrap", "huber_delta"});
  LadderSpec spec;
  spec.file = path;
  if (!root["out"]) r.fail("out", "missing: the directory the runs go under");
  spec.out = r.scalar(root["out"], "out");
  if (root["configs"]) spec.configs = r.strings(root["configs"], "configs");
  if (root["set"]) spec.overrides = r.overrides(root["set"], "set");
  if (!root["sizes"]) r.fail("sizes", "missing: at least 3 sizes, e.g. [{d_model: 64, n_layers: 2}, ...]");
  read_sizes(r, root["sizes"], spec);
  if (root["rules"]) read_rules(r, root["rules"], spec.rules);
  if (!root["tokens"]) r.fail("tokens", "missing: {per_param: 20} or {fixed: 2.0e9}");
  read_tokens(r, root["tokens"], spec);
  if (root["warmup"]) {
    spec.warmup_fraction = r.positive(root["warmup"], "warmup");
    if (spec.warmup_fraction >= 1) r.fail("warmup", "a fraction of the steps below 1, e.g. 0.1");
  }
  read_members_and_baseline(r, root, spec);
  if (root["seeds"]) spec.seeds = read_seeds(r, root["seeds"]);
  if (root["count"]) {
    const auto c = r.scalar(root["count"], "count");
    if (c == "total")
      spec.count = ParamCount::total;
    else if (c != "non_embedding")
      r.fail("count", "expected non_embedding or total, got '" + c + "'");
  }
  if (root["target"]) read_target(r, root["target"], spec);
  if (root["eval_batches"]) spec.eval_batches = r.integer(root["eval_batches"], "eval_batches", 0);
  if (root["bootstrap"]) spec.bootstrap = r.integer(root["bootstrap"], "bootstrap", 10);
  if (root["huber_delta"]) spec.huber_delta = r.positive(root["huber_delta"], "huber_delta");
  return spec;
}

}  // namespace ember
