// The CPUs this process may run on: its affinity mask (what Slurm's --cpus-per-task, taskset or a
// container's cpuset leave it), not every core of the machine.
#pragma once
#include <sched.h>

#include <algorithm>
#include <thread>

namespace ember {

inline int usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

}  // namespace ember
