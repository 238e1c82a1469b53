#include "ember/dist/environment.h"

#include <fmt/format.h>

#include <cstdlib>
#include <vector>

#include "ember/util/error.h"

namespace ember {
namespace {

int parse_int(const EnvLookup& env, const std::string& name) {
  const auto v = env(name);
  try {
    size_t used = 0;
    const int x = std::stoi(*v, &used);
    if (used == v->size()) return x;
  } catch (const std::exception&) {
  }
  throw ConfigError(fmt::format("distributed: environment variable {}='{}' is not an integer", name, *v));
}

void require_all(const EnvLookup& env, const std::vector<std::string>& names, const std::string& source) {
  std::string missing;
  for (const auto& n : names)
    if (!env(n)) missing += (missing.empty() ? "" : ", ") + n;
  if (!missing.empty())
    throw ConfigError(fmt::format("distributed: {} environment without {}", source, missing));
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

int slurm_tasks_per_node(const EnvLookup& env, int world) {
  if (const auto per_node = env("SLURM_NTASKS_PER_NODE"))  // "4" or "4(x2)"
    return std::atoi(per_node->c_str());
  if (env("SLURM_JOB_NUM_NODES")) return std::max(1, world / std::max(1, parse_int(env, "SLURM_JOB_NUM_NODES")));
  return world;
}

DistEnv from_slurm(const EnvLookup& env) {
  require_all(env, {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_JOB_NODELIST", "SLURM_JOB_ID"}, "Slurm");
  DistEnv d;
  d.source = "slurm";
  d.rank = parse_int(env, "SLURM_PROCID");
  d.world = parse_int(env, "SLURM_NTASKS");
  d.local_rank = parse_int(env, "SLURM_LOCALID");
  d.local_world = slurm_tasks_per_node(env, d.world);
  d.master_addr = env("MASTER_ADDR").value_or(first_slurm_host(*env("SLURM_JOB_NODELIST")));
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
  if (bracket == std::string::npos || (comma != std::string::npos && comma < bracket))
    return nodelist.substr(0, comma);
  const auto end = nodelist.find_first_of(",-]", bracket + 1);
  if (end == std::string::npos) throw ConfigError("distributed: cannot read SLURM_JOB_NODELIST '" + nodelist + "'");
  return nodelist.substr(0, bracket) + nodelist.substr(bracket + 1, end - bracket - 1);
}

}  // namespace ember
