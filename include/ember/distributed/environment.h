// Where this process sits in a distributed job, read from the launcher's environment: torchrun /
// `ember launch` (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT) or
// Slurm's srun (SLURM_PROCID, SLURM_STEP_NUM_TASKS or SLURM_NTASKS, SLURM_LOCALID, the tasks on
// this node from SLURM_STEP_TASKS_PER_NODE / SLURM_TASKS_PER_NODE at SLURM_NODEID, else
// SLURM_NTASKS_PER_NODE, else tasks / SLURM_JOB_NUM_NODES; the first host of SLURM_STEP_NODELIST,
// else of SLURM_JOB_NODELIST; a port derived from SLURM_JOB_ID). Neither present: one process.
#pragma once
#include <functional>
#include <optional>
#include <string>

namespace ember {

struct DistEnv {
  int rank = 0, world = 1;
  int local_rank = 0, local_world = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  std::string source = "single process";  // "torchrun", "slurm" or "single process"
  bool distributed() const { return world > 1; }
};

using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;

EnvLookup process_environment();

// Throws a ConfigError naming the missing or inconsistent variables.
DistEnv read_dist_env(const EnvLookup& env);

// The first host of a Slurm hostlist: "gpu[003-005,9],cpu1" -> "gpu003".
std::string first_slurm_host(const std::string& nodelist);

}  // namespace ember
