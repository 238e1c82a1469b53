// A ladder file resolved into runs (docs/experiments.md, "Ladders"): each size's shape from the
// rules, each member's parameters (counted on the real model, as `ember inspect` does), tokens,
// steps and FLOPs, and the sweep that trains them, one run directory per member, size and seed.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ember/experiment/ladder_spec.h"
#include "ember/experiment/sweep_spec.h"

namespace ember {

struct LadderShape {
  int64_t d_model = 0, n_layers = 0, n_heads = 0, n_kv_heads = 0, d_ff = 0;
};

// One member at one size; its seeds share it.
struct LadderEntry {
  size_t member = 0, size = 0;  // indices into the spec's members and sizes
  std::string name;             // <member>_<size>: the sweep member, and its runs' group
  LadderShape shape;
  double params_non_embedding = 0, params_total = 0;
  double n = 0;       // the counted parameters (spec.count): the N of the fit
  double tokens = 0;  // steps x tokens per step
  int64_t steps = 0;
  double flops = 0;  // training FLOPs of one run: train FLOPs per token x tokens
};

struct LadderPlan {
  SweepSpec sweep;                   // one listed member per entry, the ladder's seeds
  std::vector<LadderEntry> entries;  // size by size, members in the file's order
  std::vector<SweepMember> runs;     // sweep_members(sweep), each resolved and checked
  std::vector<size_t> run_entry;     // runs[i] belongs to entries[run_entry[i]]
  std::vector<int64_t> run_seed;     // and has that train.seed
  size_t baseline = 0;               // the baseline member's index
  double target_n = 0;               // the size the report extrapolates to
  std::string target;                // where it came from, for the report
};

// Resolves every run's config; a ConfigError names the member and size (or the spec's key).
LadderPlan plan_ladder(const LadderSpec& spec);

}  // namespace ember
