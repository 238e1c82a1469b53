// A ladder file (docs/experiments.md, "Ladders"): a sweep's members run at several model sizes, each
// with its training tokens, so that `ember ladder report` can fit how each member's loss scales with
// size. The sizes are (d_model, n_layers) pairs or parameter targets; the other widths follow from
// named rules. A ladder expands into a sweep (experiment/ladder_plan.h): one run directory per
// member, size and seed, trained and resumed by the sweep machinery.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ember/experiment/spec_reader.h"

namespace ember {

struct LadderSize {
  std::string name;           // part of the run directory's name (default: d<d_model>l<n_layers>, or p<params>)
  int64_t d_model = 0, n_layers = 0;  // given, or 0 with a parameter target
  double params = 0;                  // > 0: a target for the counted parameters (`count`), solved by the rules
};

// How a size's other widths follow from d_model; 0: as in the base config (its ratios).
struct LadderRules {
  int64_t head_dim = 0;      // n_heads = d_model / head_dim (n_kv_heads keeps the base's n_heads / n_kv_heads)
  double d_ff_ratio = 0;     // model.mlp.d_ff = d_ff_ratio x d_model, rounded up to d_ff_multiple
  int64_t d_ff_multiple = 0; // (0: 16)
  double aspect = 0;         // a parameter target's n_layers = round(d_model / aspect)
};

enum class ParamCount { non_embedding, total };  // N of the fit: the body (no embedding, no head), or all

struct LadderSpec {
  std::string file, out;
  std::vector<std::string> configs, overrides;
  std::vector<LadderSize> sizes;  // at least 3 (a fit has three parameters)
  LadderRules rules;
  double tokens_per_param = 0, tokens_fixed = 0;  // exactly one > 0: D = ratio x N, or D fixed
  double warmup_fraction = -1;                    // >= 0: optim.warmup_steps = fraction x steps
  std::vector<ListedMember> members;
  std::vector<int64_t> seeds;
  std::string baseline;  // a member; empty: the first
  ParamCount count = ParamCount::non_embedding;
  std::string target_config;  // the size the gap is extrapolated to: a config file, or
  double target_params = 0;   // a parameter count (both empty: the largest config beside the first base config)
  int64_t eval_batches = 0;   // as the sweep's
  int64_t bootstrap = 1000;   // bootstrap replicates of the report
  double huber_delta = 1e-3;
};

// Reads and checks a ladder file; a ConfigError names the file and the key.
LadderSpec load_ladder(const std::string& path);

}  // namespace ember
