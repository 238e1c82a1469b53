#include "ember/experiment/ladder_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "ember/model/summary.h"
#include "ember/run/run_config.h"
#include "ember/util/error.h"

namespace ember {
namespace {

namespace fs = std::filesystem;

struct Counted {
  double non_embedding = 0, total = 0, flops_per_token = 0;
  int64_t tokens_per_step = 0, seq_len = 0;
};

Counted count_params(const Config& cfg) {
  const auto s = summarize_model(cfg.model, cfg.train.seq_len);
  return {static_cast<double>(s.body_params), static_cast<double>(s.total_params), s.train_flops_per_token,
          cfg.train.tokens_per_step(), cfg.train.seq_len};
}

double counted(const LadderSpec& spec, const Counted& c) {
  return spec.count == ParamCount::total ? c.total : c.non_embedding;
}

std::vector<std::string> joined(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

class LadderPlanner {
 public:
  explicit LadderPlanner(const LadderSpec& spec) : spec_(spec) {
    const auto& b = spec.members[baseline_index()];
    base_configs_ = joined(spec.configs, b.configs);
    base_overrides_ = joined(spec.overrides, b.overrides);
    base_ = resolve(base_configs_, base_overrides_, "the baseline member '" + b.name + "'").model;
  }

  size_t baseline_index() const {
    for (size_t i = 0; i < spec_.members.size(); ++i)
      if (spec_.members[i].name == spec_.baseline) return i;
    return 0;
  }

  // A size's widths from d_model and n_layers by the rules (each defaulting to the base config's ratio).
  LadderShape shape(int64_t d_model, int64_t n_layers, const std::string& where) const {
    const int64_t head_dim = spec_.rules.head_dim > 0 ? spec_.rules.head_dim : base_.head_dim();
    if (d_model % head_dim != 0)
      fail(where + ".d_model", fmt::format("{} is not a multiple of the head dimension {} ({})", d_model, head_dim,
                                           spec_.rules.head_dim > 0 ? "rules.head_dim" : "the base config's"));
    LadderShape s{d_model, n_layers, d_model / head_dim, 0, 0};
    if (base_.n_kv_heads > 0) {  // grouped-query attention keeps its group size
      const int64_t group = base_.n_heads / base_.kv_heads();
      if (s.n_heads % group != 0)
        fail(where + ".d_model", fmt::format("{} heads do not split into the base config's groups of {} (n_kv_heads)",
                                             s.n_heads, group));
      s.n_kv_heads = s.n_heads / group;
    }
    const double ratio = spec_.rules.d_ff_ratio > 0 ? spec_.rules.d_ff_ratio
                                                    : static_cast<double>(base_.base_d_ff()) / base_.d_model;
    const int64_t multiple = spec_.rules.d_ff_multiple > 0 ? spec_.rules.d_ff_multiple : 16;
    s.d_ff = multiple * static_cast<int64_t>(std::ceil(ratio * d_model / multiple - 1e-9));
    return s;
  }

  static std::vector<std::string> shape_overrides(const LadderShape& s) {
    return {"model.d_model=" + std::to_string(s.d_model), "model.n_layers=" + std::to_string(s.n_layers),
            "model.n_heads=" + std::to_string(s.n_heads), "model.n_kv_heads=" + std::to_string(s.n_kv_heads),
            "model.mlp.d_ff=" + std::to_string(s.d_ff)};
  }

  // The baseline's counted parameters at a shape.
  double baseline_n(const LadderShape& s, const std::string& where) const {
    return counted(spec_, count_params(resolve(base_configs_, joined(base_overrides_, shape_overrides(s)), where)));
  }

  // A parameter target: d_model a multiple of the head dimension, n_layers = round(d_model / aspect),
  // the shape whose count is nearest the target in ratio (counts grow with d_model: a bisection).
  LadderShape solve(double target, const std::string& where) const {
    const int64_t head_dim = spec_.rules.head_dim > 0 ? spec_.rules.head_dim : base_.head_dim();
    const double aspect = spec_.rules.aspect > 0 ? spec_.rules.aspect : static_cast<double>(base_.d_model) / base_.n_layers;
    auto at = [&](int64_t k) {
      const int64_t d = k * head_dim;
      return shape(d, std::max<int64_t>(1, std::llround(d / aspect)), where);
    };
    int64_t lo = 1, hi = std::max<int64_t>(2, 65536 / head_dim);
    if (baseline_n(at(hi), where) < target) fail(where + ".params", fmt::format("{:.3g} is beyond d_model {}", target, hi * head_dim));
    while (hi - lo > 1) {
      const int64_t mid = (lo + hi) / 2;
      (baseline_n(at(mid), where) < target ? lo : hi) = mid;
    }
    const double n_lo = baseline_n(at(lo), where), n_hi = baseline_n(at(hi), where);
    return std::abs(std::log(n_lo / target)) < std::abs(std::log(n_hi / target)) ? at(lo) : at(hi);
  }

  Config resolve(const std::vector<std::string>& configs, const std::vector<std::string>& overrides,
                 const std::string& what) const {
    try {
      return load_config(configs, overrides);
    } catch (const Error& e) {
      throw ConfigError(spec_.file + ": " + what + ": " + e.what());
    }
  }

  [[noreturn]] void fail(const std::string& key, const std::string& what) const { SpecReader(spec_.file).fail(key, what); }

  const LadderSpec& spec_;
  std::vector<std::string> base_configs_, base_overrides_;
  ModelConfig base_;
};

// The largest config (in counted parameters) among the YAML files beside the first base config: a
// project keeps a paper's sizes side by side (configs/leviathan/{200m,400m,1.2b}.yaml).
std::pair<double, std::string> largest_beside(const LadderSpec& spec, const std::string& first) {
  std::pair<double, std::string> best{0, ""};
  const auto dir = fs::path(first).parent_path();
  for (const auto& f : fs::directory_iterator(dir.empty() ? fs::path(".") : dir)) {
    if (f.path().extension() != ".yaml") continue;
    try {
      const double n = counted(spec, count_params(load_config({f.path().string()}, {})));
      if (n > best.first) best = {n, f.path().string()};
    } catch (const Error&) {  // an overlay that is no model of its own
    }
  }
  return best;
}

void plan_target(const LadderSpec& spec, const LadderPlanner& planner, LadderPlan& plan) {
  if (spec.target_params > 0) {
    plan.target_n = spec.target_params, plan.target = "the ladder file's target";
    return;
  }
  if (!spec.target_config.empty()) {
    if (!fs::is_regular_file(spec.target_config)) planner.fail("target", "'" + spec.target_config + "' not found");
    plan.target_n = counted(spec, count_params(planner.resolve({spec.target_config}, {}, "target")));
    plan.target = spec.target_config + " (the ladder file's target)";
    return;
  }
  const auto first = !spec.configs.empty() ? spec.configs.front()
                     : !spec.members[plan.baseline].configs.empty() ? spec.members[plan.baseline].configs.front() : "";
  if (first.empty()) return;  // no target: the report extrapolates nothing
  const auto [n, file] = largest_beside(spec, first);
  plan.target_n = n, plan.target = file + " (the largest config beside " + first + ")";
}

}  // namespace

LadderPlan plan_ladder(const LadderSpec& spec) {
  const LadderPlanner planner(spec);
  LadderPlan plan;
  plan.baseline = planner.baseline_index();
  plan.sweep.file = spec.file, plan.sweep.out = spec.out, plan.sweep.seeds = spec.seeds;
  plan.sweep.eval_batches = spec.eval_batches;
  plan.sweep.baseline = spec.members[plan.baseline].name + "_" + spec.sizes.front().name;
  for (size_t s = 0; s < spec.sizes.size(); ++s) {
    const auto& size = spec.sizes[s];
    const std::string where = "sizes[" + std::to_string(s) + "]";
    const auto shape = size.params > 0 ? planner.solve(size.params, where) : planner.shape(size.d_model, size.n_layers, where);
    const double n_base = planner.baseline_n(shape, where);
    const double tokens = spec.tokens_fixed > 0 ? spec.tokens_fixed : spec.tokens_per_param * n_base;
    for (size_t m = 0; m < spec.members.size(); ++m) {
      const auto& member = spec.members[m];
      LadderEntry e{m, s, member.name + "_" + size.name, shape};
      const auto configs = joined(spec.configs, member.configs);
      auto own = joined(LadderPlanner::shape_overrides(shape), member.overrides);  // after the ladder's set
      const std::string what = "member '" + member.name + "' at size '" + size.name + "'";
      const auto c = count_params(planner.resolve(configs, joined(spec.overrides, own), what));
      e.params_non_embedding = c.non_embedding, e.params_total = c.total, e.n = counted(spec, c);
      e.steps = std::max<int64_t>(1, std::llround(tokens / static_cast<double>(c.tokens_per_step)));
      e.tokens = static_cast<double>(e.steps * c.tokens_per_step);
      e.flops = c.flops_per_token * e.tokens;
      own.push_back("train.steps=" + std::to_string(e.steps));
      if (spec.warmup_fraction >= 0)
        own.push_back("optim.warmup_steps=" + std::to_string(std::llround(spec.warmup_fraction * e.steps)));
      planner.resolve(configs, joined(spec.overrides, own), what);  // the run's own config, steps included
      plan.sweep.listed.push_back({e.name, member.configs, own});
      plan.entries.push_back(e);
    }
  }
  plan.sweep.configs = spec.configs, plan.sweep.overrides = spec.overrides;
  plan.runs = sweep_members(plan.sweep);
  for (const auto& run : plan.runs) {  // the sweep names a run <entry>[_seed<S>]
    const auto entry = std::find_if(plan.entries.begin(), plan.entries.end(),
                                    [&](const LadderEntry& e) { return e.name == run.group; });
    plan.run_entry.push_back(static_cast<size_t>(entry - plan.entries.begin()));
    plan.run_seed.push_back(planner.resolve(run.configs, run.overrides, "run '" + run.name + "'").train.seed);
  }
  plan_target(spec, planner, plan);
  return plan;
}

}  // namespace ember
