// ember ladder plan|run|report LADDER.yaml: a sweep's members at several model sizes and the fit of
// how each one's loss scales with size (docs/experiments.md, "Ladders"; experiment/ladder_*.h).
#include <fmt/format.h>

#include <csignal>
#include <iostream>

#include "cli/commands.h"
#include "ember/experiment/ladder_plan.h"
#include "ember/experiment/ladder_report.h"
#include "ember/experiment/sweep_runner.h"
#include "ember/run/run_config.h"
#include "ember/train/peak_cache.h"
#include "ember/util/error.h"
#include "ember/util/files.h"

namespace ember::cli {
namespace {

namespace fs = std::filesystem;

std::string short_number(double x) {
  const char* units[] = {"", "K", "M", "G", "T", "P", "E"};
  int u = 0;
  while (std::abs(x) >= 1000 && u < 6) x /= 1000, ++u;
  return fmt::format("{:.3g}{}", x, units[u]);
}

std::string duration(double s) {
  if (s < 120) return fmt::format("{:.0f} s", s);
  if (s < 7200) return fmt::format("{:.0f} min", s / 60);
  if (s < 172800) return fmt::format("{:.1f} h", s / 3600);
  return fmt::format("{:.1f} d", s / 86400);
}

struct PlanArgs {
  std::string file;
  double mfu = 0.3;
  bool json = false;
};

// FLOP/s this device sustains in training, assumed: `mfu` x the measured fp32 matmul peak (bf16 on a
// GPU when the ladder trains in bf16), cached as training caches it. Training is never timed here.
double assumed_flops_per_s(const LadderPlan& plan, double mfu) {
  const auto& run = plan.runs.front();
  const Config cfg = load_config(run.configs, run.overrides);
  const auto device = resolve_device(cfg.train.device, "train.device");
  const auto dtype = device.is_cuda() && cfg.train.precision == Precision::bf16 ? at::kBFloat16 : at::kFloat;
  return mfu * matmul_peak(device, dtype).flops;  // cached, as training reads it
}

void plan_command(const PlanArgs& args) {
  const auto spec = load_ladder(args.file);
  const auto plan = plan_ladder(spec);
  const double flops_per_s = assumed_flops_per_s(plan, args.mfu);
  const size_t seeds = std::max<size_t>(1, spec.seeds.size());
  if (args.json) {
    print_json_array(plan.entries, [&](const LadderEntry& e) {
      return nlohmann::json{{"run", e.name}, {"member", spec.members[e.member].name}, {"size", spec.sizes[e.size].name},
                            {"d_model", e.shape.d_model}, {"n_layers", e.shape.n_layers}, {"n_heads", e.shape.n_heads},
                            {"d_ff", e.shape.d_ff}, {"params_non_embedding", e.params_non_embedding},
                            {"params_total", e.params_total}, {"n", e.n}, {"tokens", e.tokens}, {"steps", e.steps},
                            {"flops", e.flops}, {"seeds", seeds}, {"estimated_s", e.flops / flops_per_s}};
    });
    return;
  }
  std::cout << fmt::format("{:<24} {:>7} {:>3} {:>3} {:>6} {:>9} {:>9} {:>9} {:>7} {:>9} {:>9}\n", "run", "d_model",
                           "L", "H", "d_ff", "N non-emb", "N total", "tokens", "steps", "FLOPs", "time/run");
  double total = 0;
  for (const auto& e : plan.entries) {
    std::cout << fmt::format("{:<24} {:>7} {:>3} {:>3} {:>6} {:>9} {:>9} {:>9} {:>7} {:>9} {:>9}\n", e.name,
                             e.shape.d_model, e.shape.n_layers, e.shape.n_heads, e.shape.d_ff,
                             short_number(e.params_non_embedding), short_number(e.params_total), short_number(e.tokens), e.steps,
                             short_number(e.flops), duration(e.flops / flops_per_s));
    total += e.flops * static_cast<double>(seeds);
  }
  std::cout << fmt::format(
      "{} runs ({} entries x {} seed(s)), {} training FLOPs, about {} here at {:.0f}% of the measured matmul peak "
      "({} FLOP/s assumed; --mfu sets the fraction)\n",
      plan.runs.size(), plan.entries.size(), seeds, short_number(total), duration(total / flops_per_s), 100 * args.mfu,
      short_number(flops_per_s));
  if (plan.target_n > 0) std::cout << fmt::format("target of the extrapolation: {}, N = {}\n", plan.target, short_number(plan.target_n));
}

struct ReportArgs {
  std::string file, out;
  std::string points;     // a ladder_points.csv to read instead of the run directories
  int64_t bootstrap = 0;  // 0: the ladder file's
  double target = 0;      // 0: the ladder file's
  uint64_t seed = 0;
};

void report_command(const ReportArgs& args) {
  auto spec = load_ladder(args.file);
  if (args.target > 0) spec.target_params = args.target, spec.target_config.clear();
  const auto plan = plan_ladder(spec);
  std::vector<std::string> missing;
  const auto data =
      args.points.empty() ? read_ladder(spec, plan, missing) : read_ladder_points(spec, plan, args.points, missing);
  auto report = analyse_ladder(data, {args.bootstrap > 0 ? args.bootstrap : spec.bootstrap, args.seed, spec.huber_delta});
  if (!missing.empty())
    report.warnings.insert(
        report.warnings.begin(),
        fmt::format("{} run(s) have no results ({}) and are left out: {}", missing.size(),
                    args.points.empty() ? "no eval.json" : "not in " + args.points, fmt::join(missing, ", ")));
  for (const auto& w : report.warnings) std::cerr << "ladder: warning: " << w << "\n";
  const fs::path out = args.out.empty() ? fs::path(spec.out) : fs::path(args.out);
  write_ladder_report(report, out);
  std::cout << read_text_file(out / "ladder.md") << "\nreport: " << (out / "ladder.md").string() << ", "
            << (out / "ladder_fits.csv").string() << ", " << (out / "ladder_gaps.csv").string() << "\n";
}

void run_command(const SweepRunArgs& args) {
  const auto spec = load_ladder(args.file);
  const auto plan = plan_ladder(spec);
  if (args.emit == SweepEmit::slurm) {
    const auto script =
        write_slurm_array(plan.sweep, args.file, plan.runs.size(), args.sbatch_options, args.options, "ladder run");
    std::cout << fmt::format("wrote {} ({} runs); submit it with: sbatch {}\n", script.string(), plan.runs.size(),
                             script.string());
    return;
  }
  if (args.dry_run) return print_sweep_commands(plan.sweep, plan.runs, args.options);
  std::signal(SIGINT, request_sweep_stop);
  std::signal(SIGTERM, request_sweep_stop);
  auto options = args.options;
  options.report = false;
  try {
    run_sweep(plan.sweep, plan.runs, options);  // throws naming failed or unfinished runs
  } catch (const Error&) {  // as a sweep does: the runs that finished still get their report
    if (options.member < 0) try {
        report_command({args.file, "", "", 0, 0, 0});
      } catch (const Error& e) {
        std::cerr << "ladder: no report: " << e.what() << "\n";
      }
    throw;
  }
  if (options.member < 0) report_command({args.file, "", "", 0, 0, 0});
}

void add_plan(CLI::App& ladder) {
  auto* cmd = ladder.add_subcommand("plan", "Print the ladder's runs: shapes, parameters, tokens, FLOPs, time here");
  auto args = std::make_shared<PlanArgs>();
  cmd->add_option("ladder", args->file, "Ladder file (YAML)")->required();
  cmd->add_option("--mfu", args->mfu, "Fraction of the measured matmul peak training reaches (default 0.3)")
      ->check(CLI::Range(1e-3, 1.0));
  cmd->add_flag("--json", args->json, "Print JSON, one object per member and size");
  cmd->callback([args] { plan_command(*args); });
}

void add_run(CLI::App& ladder) {
  auto* cmd = ladder.add_subcommand("run", "Train and evaluate every run of the ladder (resumable), then report");
  auto args = std::make_shared<SweepRunArgs>();
  cmd->add_option("ladder", args->file, "Ladder file (YAML)")->required();
  add_sweep_run_options(*cmd, *args, "run");
  cmd->callback([args] { run_command(*args); });
}

void add_report(CLI::App& ladder) {
  auto* cmd = ladder.add_subcommand("report", "Fit L(N) = E + A N^-alpha per member; gaps against the baseline");
  auto args = std::make_shared<ReportArgs>();
  cmd->add_option("ladder", args->file, "Ladder file (YAML)")->required();
  cmd->add_option("--out", args->out, "Where ladder.md, the CSV files and the figure go (default: the ladder's out)");
  cmd->add_option("--bootstrap", args->bootstrap, "Bootstrap replicates (default: the file's bootstrap, else 1000)")
      ->check(CLI::Range(int64_t{10}, int64_t{1000000}));
  cmd->add_option("--target", args->target, "Parameters to extrapolate the gap to (default: the file's target)")
      ->check(kPositive);
  cmd->add_option("--seed", args->seed, "Seed of the bootstrap's resampling (default 0)");
  cmd->add_option("--points", args->points,
                  "Read the runs' losses from a report's ladder_points.csv instead of the run directories");
  cmd->callback([args] { report_command(*args); });
}

}  // namespace

void register_ladder(CLI::App& app) {
  auto* cmd = app.add_subcommand("ladder", "Scaling ladders: a sweep at several sizes and its fitted scaling laws");
  cmd->footer(
      "Examples:\n"
      "  ember ladder plan configs/ladders/leviathan-cpu.yaml       # the runs, parameters, tokens, FLOPs, time\n"
      "  ember ladder run configs/ladders/leviathan-cpu.yaml        # train (resumes), evaluate, report\n"
      "  ember ladder run configs/ladders/leviathan-cpu.yaml --emit slurm --sbatch-option=--gres=gpu:1\n"
      "  ember ladder report configs/ladders/leviathan-cpu.yaml --bootstrap 2000\n"
      "Runs go to <out>/<member>_<size>[_seed<S>] (as a sweep's members); the report to <out>/ladder.md,\n"
      "ladder_fits.csv, ladder_gaps.csv, ladder_points.csv and ladder.png / .svg. Each member's final validation\n"
      "losses are fitted as L(N) = E + A N^-alpha (Huber loss on log-loss, several starts); 95% intervals come\n"
      "from a bootstrap over the cells (size, seed); a gap whose interval holds 0 is \"not resolved\", and one\n"
      "beyond the ladder's sizes is flagged as an extrapolation (docs/experiments.md, \"Ladders\").");
  cmd->require_subcommand(1);
  add_plan(*cmd);
  add_run(*cmd);
  add_report(*cmd);
}

}  // namespace ember::cli
