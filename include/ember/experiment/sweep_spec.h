// A sweep file (docs/experiments.md): the base config files, overrides every member gets, a grid
// and/or a list of named members, seeds, the baseline of the report and the evaluations to run
// after training. Every member is one run directory, out/<member name>.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ember/eval/task_kind.h"
#include "ember/experiment/spec_reader.h"

namespace ember {

struct SweepMember {
  std::string name;   // run directory name under the sweep's out
  std::string group;  // the name without its seed suffix: the report pools a group's seeds
  std::vector<std::string> configs;
  std::vector<std::string> overrides;  // "key=value", after the configs (as ember train --set)
};

struct SweepSpec {
  std::string file;                    // where it was read from (for errors)
  std::string out;                     // run directories go under it
  std::vector<std::string> configs;    // base config files, merged in order
  std::vector<std::string> overrides;  // "key=value" for every member
  std::vector<std::pair<std::string, std::vector<std::string>>> grid;  // key -> values, in file order
  using Listed = ListedMember;
  std::vector<Listed> listed;  // members named one by one
  std::vector<int64_t> seeds;  // empty: the config's train.seed
  std::string baseline;        // a member (group) name; empty: the first
  bool buckets = false;        // evals: [perplexity, buckets]
  bool capacity = false;       // evals: [capacity]: exact epsilon and cosine histogram of the input embedding
  int64_t eval_batches = 0;    // 0: the whole validation set
  struct Task {
    std::string name;
    TaskKind kind = TaskKind::choice;  // as ember eval --task
    std::string file;
    int64_t limit = 0;             // items scored (0: all)
  };
  std::vector<Task> tasks;  // zero-shot tasks after training, reported by name
};

// Reads and checks a sweep file; a ConfigError names the file and the key.
SweepSpec load_sweep(const std::string& path);
// Grid points (in row-major order of the grid keys) then the listed members, each once per seed
// (name suffix _seed<S> when there are several). Names are unique and safe as directory names.
std::vector<SweepMember> sweep_members(const SweepSpec& spec);
// Resolves every member's config (as ember train would), so a bad key or value fails before any
// training: a ConfigError naming the member.
void check_sweep_members(const std::vector<SweepMember>& members);

}  // namespace ember
