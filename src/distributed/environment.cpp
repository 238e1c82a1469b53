#include "ember/distributed/environment.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <vector>

#include "ember/util/error.h"

namespace ember {
namespace {

int parse_int(const EnvLookup& env, const std::string& name) {
  const auto v = env(name);
  const bool digits = !v->empty() && (std::isdigit(static_cast<unsigned char>((*v)[0])) || (*v)[0] == '-');
  try {
    size_t used = 0;
    const int x = std::stoi(*v, &used);
    if (used == v->size() && digits) return x;
  } catch (const std::exception&) {
  }
  throw ConfigError(fmt::format("distributed: environment variable {}='{}' is not an integer", name, *v));
}

void require_all(const EnvLookup& env, const std::vector<std::string>& names, const std::string& source) {
  std::string missing;
  for (const auto& n : names)
    if (!env(n)) missing += (missing.empty() ? "" : ", ") + n;
  if (!missing.empty()) throw ConfigError(fmt::format("distributed: {} environment without {}", source, missing));
}

void check_consistent(const DistEnv& d) {
  auto fail = [&](const std::string& what) { throw ConfigError("distributed (" + d.source + "): " + what); };
  if (d.world < 1) fail(fmt::format("world size {} < 1", d.world));
  if (d.rank < 0 || d.rank >= d.world) fail(fmt::format("rank {} outside [0, {})", d.rank, d.world));
  if (d.local_world < 1 || d.local_world > d.world)
    fail(fmt::format("local world size {} outside [1, {}]", d.local_world, d.world));
  if (d.local_rank < 0 || d.local_rank >= d.local_world)
    fail(fmt::format("local rank {} outside [0, {})", d.local_rank, d.local_world));
  if (d.master_port < 1 || d.master_port > 65535) fail(fmt::format("master port {} outside [1, 65535]", d.master_port));
}

DistEnv from_torchrun(const EnvLookup& env) {
  require_all(env, {"RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"}, "torchrun");
  DistEnv d;
  d.source = "torchrun";
  d.rank = parse_int(env, "RANK");
  d.world = parse_int(env, "WORLD_SIZE");
  d.local_rank = env("LOCAL_RANK") ? parse_int(env, "LOCAL_RANK") : d.rank;
  d.local_world = env("LOCAL_WORLD_SIZE") ? parse_int(env, "LOCAL_WORLD_SIZE") : d.world;
  d.master_addr = *env("MASTER_ADDR");
  d.master_port = parse_int(env, "MASTER_PORT");
  return d;
}

int strict_int(const std::string& text, const std::string& name, const std::string& whole) {
  size_t used = 0;
  int x = -1;
  try {
    x = std::stoi(text, &used);
  } catch (const std::exception&) {
  }
  if (x < 0 || used != text.size() || text.empty() || !std::isdigit(static_cast<unsigned char>(text[0])))
    throw ConfigError(fmt::format("distributed: cannot read environment variable {}='{}'", name, whole));
  return x;
}

// Slurm's per-node task counts: "2(x3),1" = 2, 2, 2, 1.
std::vector<int> expand_tasks_per_node(const std::string& text, const std::string& name) {
  std::vector<int> counts;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    const size_t paren = item.find("(x");
    const int count = strict_int(item.substr(0, paren), name, text);
    int repeat = 1;
    if (paren != std::string::npos) {
      if (item.back() != ')') strict_int(item, name, text);  // throws, naming the variable
      repeat = strict_int(item.substr(paren + 2, item.size() - paren - 3), name, text);
    }
    counts.insert(counts.end(), repeat, count);
    start = comma + 1;
  }
  return counts;
}

// Tasks on this task's node: the step's per-node list (srun's SLURM_STEP_TASKS_PER_NODE, else
// SLURM_TASKS_PER_NODE) at SLURM_NODEID; else SLURM_NTASKS_PER_NODE; else tasks / nodes.
int slurm_tasks_per_node(const EnvLookup& env, int world) {
  if (env("SLURM_NODEID"))
    for (const char* name : {"SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE"}) {
      if (!env(name)) continue;
      const auto counts = expand_tasks_per_node(*env(name), name);
      const int node = parse_int(env, "SLURM_NODEID");
      if (node < 0 || node >= static_cast<int>(counts.size()))
        throw ConfigError(fmt::format("distributed (slurm): SLURM_NODEID={} but {}='{}' lists {} nodes", node, name,
                                      *env(name), counts.size()));
      return counts[node];
    }
  if (const auto per_node = env("SLURM_NTASKS_PER_NODE"))  // "4" or "4(x2)"
    return expand_tasks_per_node(*per_node, "SLURM_NTASKS_PER_NODE").front();
  if (env("SLURM_JOB_NUM_NODES")) return std::max(1, world / std::max(1, parse_int(env, "SLURM_JOB_NUM_NODES")));
  return world;
}

DistEnv from_slurm(const EnvLookup& env) {
  require_all(env, {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_JOB_NODELIST", "SLURM_JOB_ID"}, "Slurm");
  DistEnv d;
  d.source = "slurm";
  d.rank = parse_int(env, "SLURM_PROCID");
  d.world = parse_int(env, env("SLURM_STEP_NUM_TASKS") ? "SLURM_STEP_NUM_TASKS" : "SLURM_NTASKS");
  d.local_rank = parse_int(env, "SLURM_LOCALID");
  d.local_world = slurm_tasks_per_node(env, d.world);
  // The step's first node runs rank 0 (an srun on part of the allocation starts elsewhere than the job).
  if (const auto addr = env("MASTER_ADDR"))
    d.master_addr = *addr;
  else
    d.master_addr = first_slurm_host(*env(env("SLURM_STEP_NODELIST") ? "SLURM_STEP_NODELIST" : "SLURM_JOB_NODELIST"));
  // A port per job, so that two jobs sharing a node do not collide: 20000 + job id mod 10000.
  d.master_port = env("MASTER_PORT") ? parse_int(env, "MASTER_PORT") : 20000 + parse_int(env, "SLURM_JOB_ID") % 10000;
  return d;
}

}  // namespace

EnvLookup process_environment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (!v || !*v) return std::nullopt;
    return std::string(v);
  };
}

DistEnv read_dist_env(const EnvLookup& env) {
  DistEnv d;
  if (env("WORLD_SIZE") || env("RANK"))
    d = from_torchrun(env);
  else if (env("SLURM_PROCID") && env("SLURM_NTASKS") && parse_int(env, "SLURM_NTASKS") > 1)
    d = from_slurm(env);
  check_consistent(d);
  return d;
}

std::string first_slurm_host(const std::string& nodelist) {
  const auto bracket = nodelist.find('[');
  const auto comma = nodelist.find(',');
  if (bracket == std::string::npos || (comma != std::string::npos && comma < bracket)) return nodelist.substr(0, comma);
  const auto end = nodelist.find_first_of(",-]", bracket + 1);
  if (end == std::string::npos) throw ConfigError("distributed: cannot read the Slurm node list '" + nodelist + "'");
  return nodelist.substr(0, bracket) + nodelist.substr(bracket + 1, end - bracket - 1);
}

}  // namespace ember
