// ember sweep SWEEP.yaml: train and evaluate every member of a sweep (docs/experiments.md), skipping
// complete members and resuming interrupted ones, then write the report (experiment/sweep_runner.h).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <csignal>
#include <iostream>

#include "cli/commands.h"
#include "ember/experiment/sweep_runner.h"
#include "ember/experiment/sweep_spec.h"

namespace ember::cli {
namespace {

void run(const SweepRunArgs& args) {
  const auto spec = load_sweep(args.file);
  const auto members = sweep_members(spec);
  check_sweep_members(members);
  if (args.emit == SweepEmit::slurm) {
    const auto script = write_slurm_array(spec, args.file, members.size(), args.sbatch_options, args.options);
    std::cout << fmt::format("wrote {} ({} members); submit it with: sbatch {}\n", script.string(), members.size(),
                             script.string());
    return;
  }
  if (args.dry_run) return print_sweep_commands(spec, members, args.options);
  std::signal(SIGINT, request_sweep_stop);  // the trainers checkpoint; a kill of the sweep alone is passed on
  std::signal(SIGTERM, request_sweep_stop);
  run_sweep(spec, members, args.options);
}

}  // namespace

void print_sweep_commands(const SweepSpec& spec, const std::vector<SweepMember>& members, const SweepRunOptions& options) {
  const SweepRunner runner(spec, options);
  for (size_t i = 0; i < members.size(); ++i) {
    std::vector<std::string> quoted;
    for (const auto& a : runner.train_command(members[i])) quoted.push_back(shell_quote(a));
    std::cout << fmt::format("[{}] {}: {}\n", i, members[i].name, fmt::join(quoted, " "));
  }
}

void add_sweep_run_options(CLI::App& cmd, SweepRunArgs& args, const std::string& unit) {
  cmd.add_option("--parallel", args.options.parallel, "Runs trained at once (CPU threads split between them)")
      ->check(kPositive);
  cmd.add_option("--member", args.options.member,
                 "Run only " + unit + " I (0-based, as --dry-run numbers them; what each array task of --emit slurm runs)")
      ->check(kNonNegative);
  cmd.add_option("--launch", args.options.launch,
                 "Train each " + unit + " data-parallel as `ember launch -n N -- ember train ...` (N ranks here)")
      ->check(kPositive);
  cmd.add_option("--emit", args.emit, "Write <out>/sweep.sbatch, a Slurm array with one task per " + unit + ", and stop")
      ->transform(CLI::CheckedTransformer(std::map<std::string, SweepEmit>{{"slurm", SweepEmit::slurm}}));
  cmd.add_option("--sbatch-option", args.sbatch_options, "An #SBATCH line for --emit slurm (repeatable)");
  cmd.add_flag("--dry-run", args.dry_run, "Print each " + unit + "'s training command and stop");
}

void register_sweep(CLI::App& app) {
  auto* cmd = app.add_subcommand("sweep", "Train and evaluate every member of a sweep file, then write its report");
  cmd->footer(
      "Examples:\n"
      "  ember sweep configs/sweeps/mixers-cpu.yaml                   # one member after another\n"
      "  ember sweep configs/sweeps/mixers-cpu.yaml --parallel 2      # two at a time, CPU threads split\n"
      "  ember sweep configs/sweeps/mixers-cpu.yaml --dry-run         # the members and their commands\n"
      "  ember sweep configs/sweeps/tapered-cpu.yaml --launch 2       # each member on 2 data-parallel ranks\n"
      "  ember sweep configs/sweeps/leviathan-1.2b.yaml --emit slurm --sbatch-option=--gres=gpu:1\n"
      "A complete member (its eval.json exists) is skipped; an interrupted one resumes from its last\n"
      "checkpoint. Runs go to <out>/<member>; the report to <out>/report.md and report.csv.");
  auto args = std::make_shared<SweepRunArgs>();
  cmd->add_option("sweep", args->file, "Sweep file (YAML: out, configs, set, grid, members, seeds, baseline, evals)")
      ->required();
  add_sweep_run_options(*cmd, *args, "member");
  cmd->callback([args] { run(*args); });
}

}  // namespace ember::cli
