// Where the time of profiled training steps went, by category, from the profiler's events
// (train/step_profiler.h). On a GPU the table is of device time (kernels, copies); on a CPU of the
// ops' self time on their threads. Idle is the window's time that no event (or, on a GPU, no
// kernel) covers: launch gaps, host work between ops, waiting on the host.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ember/util/profile_scopes.h"

namespace ember {

struct ProfiledEvent {
  std::string name;
  uint64_t start_ns = 0, end_ns = 0;
  uint64_t thread = 0;       // CPU events: the thread; nesting is read per thread
  bool device = false;       // a kernel, copy or memset that ran on the accelerator
  uint64_t correlation = 0;  // device: its launch's id; CPU: a runtime launch's own id (0: none)
};

// The categories, in the order the table prints them.
inline const std::vector<std::string>& profile_categories() {
  static const std::vector<std::string> names{"matmul",       "attention",     "element-wise/norm", "loss head",
                                              "optimizer",    "communication", "framework",         "idle"};
  return names;
}

struct ProfileSummary {
  int64_t steps = 0;
  bool device = false;  // the table is of device time
  double window_s = 0.0;
  std::map<std::string, double> seconds;  // per category, all steps together
  // Reads of a tensor's value by ember's code (aten::_local_scalar_dense outside an ATen op: a wait
  // for the device on a GPU) and the CUDA runtime's synchronisation calls.
  double host_syncs_per_step = 0.0;
  // kernels (device), or innermost ops that compute (CPU: ATen's and ember's, views and allocations
  // left out): what a GPU would launch kernels for
  double ops_per_step = 0.0;
  std::vector<std::pair<std::string, double>> top_ops;  // self seconds, largest first

  nlohmann::json to_json() const;
  std::string table() const;  // a few lines for the log
};

// The category of an op or kernel by its name alone (the scopes above take precedence).
std::string categorize_op(const std::string& name, bool device);
// True for the events that can make the host wait for the device (see host_syncs_per_step).
bool is_host_sync(const std::string& name);

ProfileSummary summarize_profile(const std::vector<ProfiledEvent>& events, int64_t steps, size_t top = 15);

}  // namespace ember
