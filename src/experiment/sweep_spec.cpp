#include "ember/experiment/sweep_spec.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "ember/run/run_config.h"
#include "ember/util/error.h"

namespace ember {
namespace {

void read_grid(const SpecReader& r, const YAML::Node& grid, SweepSpec& spec) {
  if (!grid.IsMap()) r.fail("grid", "expected a map of config keys to lists of values");
  for (const auto& kv : grid) {
    const auto key = kv.first.Scalar();
    if (!kv.second.IsSequence() || kv.second.size() == 0) r.fail("grid." + key, "expected a non-empty list of values");
    std::vector<std::string> values;
    for (const auto& v : kv.second) values.push_back(SpecReader::value_text(v));
    spec.grid.emplace_back(key, values);
  }
}

void read_tasks(const SpecReader& r, const YAML::Node& tasks, SweepSpec& spec) {
  if (!tasks.IsSequence()) r.fail("tasks", "expected a list of {name, kind, file, limit}");
  for (size_t i = 0; i < tasks.size(); ++i) {
    const auto& t = tasks[i];
    const std::string where = "tasks[" + std::to_string(i) + "]";
    if (!t.IsMap() || !t["name"] || !t["kind"] || !t["file"]) r.fail(where, "expected a map with name, kind and file");
    r.only(t, where + ".", {"name", "kind", "file", "limit"});
    SweepSpec::Task task{r.scalar(t["name"], where + ".name"), TaskKind::choice, r.scalar(t["file"], where + ".file"), 0};
    const std::string kind = r.scalar(t["kind"], where + ".kind");
    if (!enum_from_name(kind, task.kind))
      r.fail(where + ".kind", "unknown task kind '" + kind + "' (kinds: " + fmt::format("{}", fmt::join(enum_spellings<TaskKind>(), ", ")) + ")");
    if (!std::filesystem::is_regular_file(task.file)) r.fail(where + ".file", "'" + task.file + "' not found");
    if (t["limit"]) task.limit = r.integer(t["limit"], where + ".limit", 0);
    spec.tasks.push_back(std::move(task));
  }
}

}  // namespace

SweepSpec load_sweep(const std::string& path) {
  const YAML::Node root = load_spec_file(path, "sweep");
  SpecReader r(path);
  r.only(root, "", {"out", "configs", "set", "grid", "members", "seeds", "baseline", "evals", "eval_batches", "tasks"});
  SweepSpec spec;
  spec.file = path;
  if (!root["out"]) r.fail("out", "missing: the directory the members' runs go under");
  spec.out = r.scalar(root["out"], "out");
  if (root["configs"]) spec.configs = r.strings(root["configs"], "configs");
  if (root["set"]) spec.overrides = r.overrides(root["set"], "set");
  if (root["grid"]) read_grid(r, root["grid"], spec);
  if (root["members"]) spec.listed = read_listed_members(r, root["members"]);
  if (spec.grid.empty() && spec.listed.empty()) r.fail("grid", "a sweep needs a grid, a list of members, or both");
  if (root["seeds"]) spec.seeds = read_seeds(r, root["seeds"]);
  if (root["baseline"]) spec.baseline = safe_name(r.scalar(root["baseline"], "baseline"));  // as members are named
  if (root["evals"])
    for (const auto& e : r.strings(root["evals"], "evals")) {
      if (e == "buckets")
        spec.buckets = true;
      else if (e == "capacity")
        spec.capacity = true;
      else if (e != "perplexity")
        r.fail("evals", "unknown evaluation '" + e + "' (evaluations: perplexity, buckets, capacity)");
    }
  if (root["eval_batches"])
    spec.eval_batches = r.integer(root["eval_batches"], "eval_batches", 0);
  if (root["tasks"]) read_tasks(r, root["tasks"], spec);
  return spec;
}

std::vector<SweepMember> sweep_members(const SweepSpec& spec) {
  std::vector<SweepMember> bases;
  size_t points = spec.grid.empty() ? 0 : 1;
  for (const auto& [key, values] : spec.grid) points *= values.size();
  for (size_t p = 0; p < points; ++p) {  // row-major: the last key varies fastest
    SweepMember m{"", "", spec.configs, spec.overrides};
    size_t rest = p, stride = points;
    for (const auto& [key, values] : spec.grid) {
      stride /= values.size();
      const auto& value = values[rest / stride];
      rest %= stride;
      m.overrides.push_back(key + "=" + value);
      m.name += (m.name.empty() ? "" : "_") + safe_name(value);
    }
    bases.push_back(std::move(m));
  }
  for (const auto& l : spec.listed) {
    SweepMember m{safe_name(l.name), "", spec.configs, spec.overrides};
    m.configs.insert(m.configs.end(), l.configs.begin(), l.configs.end());
    m.overrides.insert(m.overrides.end(), l.overrides.begin(), l.overrides.end());
    bases.push_back(std::move(m));
  }
  std::vector<SweepMember> out;
  std::set<std::string> names;
  for (auto& base : bases) {
    if (base.name.empty() || base.name.find_first_not_of('.') == std::string::npos)
      throw ConfigError(spec.file + ": a member named '" + base.name + "' would not be a directory of its own under " +
                        spec.out);
    base.group = base.name;
    if (!names.insert(base.name).second)
      throw ConfigError(spec.file + ": two members are both named '" + base.name + "'");
    if (spec.seeds.empty()) out.push_back(base);
    for (int64_t seed : spec.seeds) {
      auto m = base;
      if (spec.seeds.size() > 1) m.name += "_seed" + std::to_string(seed);
      m.overrides.push_back("train.seed=" + std::to_string(seed));
      out.push_back(std::move(m));
    }
  }
  if (!spec.baseline.empty() && !names.count(spec.baseline))
    throw ConfigError(spec.file + ": baseline: no member named '" + spec.baseline + "'");
  return out;
}

void check_sweep_members(const std::vector<SweepMember>& members) {
  for (const auto& m : members) try {
      load_config(m.configs, m.overrides);
    } catch (const Error& e) {
      throw ConfigError("sweep member '" + m.name + "': " + e.what());
    }
}

}  // namespace ember
