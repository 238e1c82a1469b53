// ember sweep SWEEP.yaml: train and evaluate every member of a sweep (docs/experiments.md), skipping
// complete members and resuming interrupted ones, then write the report.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <map>
#include <mutex>
#include <thread>

#include "cli/commands.h"
#include "ember/checkpoint/run_config.h"
#include "ember/experiment/child_process.h"
#include "ember/experiment/run_report.h"
#include "ember/experiment/sweep_spec.h"
#include "ember/util/cpus.h"
#include "ember/util/error.h"
#include "ember/util/files.h"
#include "ember/util/log.h"

namespace ember::cli {
namespace {

struct SweepArgs {
  std::string file;
  int64_t parallel = 1;
  int64_t member = -1;
  int64_t launch = 0;  // > 0: each member trains as `ember launch -n N -- ember train ...`
  std::string emit;
  std::vector<std::string> sbatch_options;
  bool dry_run = false;
};

std::atomic<bool> g_stop{false};
// Let the trainers checkpoint: a terminal's Ctrl-C reaches them itself, a kill of the sweep alone
// is passed on.
void on_stop_signal(int sig) {
  g_stop = true;
  signal_children(sig);
}

enum class Outcome { done, failed, interrupted };

class SweepRunner {
 public:
  SweepRunner(const SweepSpec& spec, int64_t parallel, int64_t launch)
      : spec_(spec), parallel_(parallel), launch_(launch) {
    const int64_t cores = usable_cpus();
    const int64_t processes = parallel * std::max<int64_t>(launch, 1);
    threads_ = processes > 1 ? std::max<int64_t>(1, cores / processes) : 0;
  }

  std::vector<std::string> train_command(const SweepMember& m) const {
    const auto dir = run_dir(m);
    std::vector<std::string> cmd{self_executable(), "train"};
    if (launch_ > 0)
      cmd = {self_executable(), "launch", "-n", std::to_string(launch_), "--", self_executable(), "train"};
    if (fs::exists(dir / "checkpoints") && !fs::is_empty(dir / "checkpoints")) {
      cmd.insert(cmd.end(), {"--resume", "--run-dir", dir.string()});
    } else {
      for (const auto& c : m.configs) cmd.insert(cmd.end(), {"-c", c});
      for (const auto& o : m.overrides) cmd.insert(cmd.end(), {"--set", o});
      cmd.insert(cmd.end(), {"--set", "log.dir=" + spec_.out, "--set", "log.name=" + m.name});
    }
    if (threads_ > 0) cmd.insert(cmd.end(), {"--set", "train.threads=" + std::to_string(threads_)});
    return cmd;
  }

  Outcome run(const SweepMember& m) {
    const auto dir = run_dir(m);
    if (fs::is_regular_file(dir / "eval.json")) return say(m, "complete, skipped"), Outcome::done;
    const bool resuming = fs::exists(dir / "checkpoints") && !fs::is_empty(dir / "checkpoints");
    say(m, resuming ? "resuming" : "training");
    std::string log;
    if (parallel_ > 1) {
      fs::create_directories(fs::path(spec_.out) / "logs");
      log = (fs::path(spec_.out) / "logs" / (m.name + ".log")).string();
    }
    const int rc = run_child(train_command(m), log);
    if (rc != 0)
      return say(m, fmt::format("training failed (exit {}){}", rc, log.empty() ? "" : ", see " + log)), Outcome::failed;
    if (!finished(dir))
      return say(m, "stopped before its last step (resume by running the sweep again)"), Outcome::interrupted;
    std::vector<std::string> eval{self_executable(), "eval",      dir.string(),
                                  "--json",          "--batches", std::to_string(spec_.eval_batches)};
    if (spec_.buckets) eval.push_back("--buckets");
    const auto tmp = dir / "eval.json.tmp";
    const int erc = run_child(eval, log, tmp.string());
    if (erc != 0) return after_failed_step(m, "evaluation", erc, {tmp});
    auto results = nlohmann::json::parse(read_text_file(tmp));
    for (const auto& task : spec_.tasks) {
      const auto out = dir / ("task_" + task.name + ".json");
      const int trc = run_child({self_executable(), "eval", dir.string(), "--task", task.kind, task.file, "--json",
                                 "--limit", std::to_string(task.limit)},
                                log, out.string());
      if (trc != 0) return after_failed_step(m, "task " + task.name, trc, {tmp, out});
      results["tasks"][task.name] = nlohmann::json::parse(read_text_file(out));
      fs::remove(out);
    }
    if (spec_.capacity) {
      const auto out = dir / "capacity.json.tmp";
      const int crc = run_child({self_executable(), "capacity", dir.string(), "--json"}, log, out.string());
      if (crc != 0) return after_failed_step(m, "capacity", crc, {tmp, out});
      results["capacity"] = nlohmann::json::parse(read_text_file(out)).at(0);
      fs::remove(out);
    }
    write_file_atomic(dir / "eval.json", results.dump());  // last: its presence marks the member complete
    fs::remove(tmp);
    say(m, "complete");
    return Outcome::done;
  }

  fs::path run_dir(const SweepMember& m) const { return fs::path(spec_.out) / m.name; }

 private:
  // An evaluation step that did not finish: its partial outputs go; stopped by the sweep's own
  // SIGINT / SIGTERM it leaves the member unfinished (the next sweep evaluates it), else failed.
  Outcome after_failed_step(const SweepMember& m, const std::string& step, int rc,
                            const std::vector<fs::path>& partial) {
    for (const auto& f : partial) fs::remove(f);
    if (g_stop && (rc == 128 + SIGINT || rc == 128 + SIGTERM))
      return say(m, step + " stopped (the next sweep evaluates the trained member)"), Outcome::interrupted;
    return say(m, fmt::format("{} failed (exit {})", step, rc)), Outcome::failed;
  }

  // The run's last evaluation is at its configured last step (a preempted run exits 0 earlier).
  static bool finished(const fs::path& dir) {
    const auto cfg = load_config({(dir / "config.yaml").string()}, {});
    const auto run = read_run(dir);
    return run.steps >= static_cast<double>(cfg.train.steps);
  }

  void say(const SweepMember& m, const std::string& what) {
    std::lock_guard<std::mutex> lock(print_);
    std::cout << fmt::format("== {}: {}", m.name, what) << std::endl;
  }

  const SweepSpec& spec_;
  int64_t parallel_, launch_, threads_ = 0;
  std::mutex print_;
};

std::string shell_quote(const std::string& s) {
  if (s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+") ==
      std::string::npos)
    return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

void emit_slurm(const SweepArgs& args, const SweepSpec& spec, size_t members) {
  fs::create_directories(fs::path(spec.out) / "logs");
  const auto script = fs::path(spec.out) / "sweep.sbatch";
  std::string text = fmt::format(
      "#!/bin/bash\n# Written by `ember sweep {0} --emit slurm`: one array task per member. Submit with\n"
      "#   sbatch {1}\n# then, when every task is done: ember sweep {0}   (writes the report; nothing is retrained)\n"
      "#SBATCH --job-name=ember-sweep\n#SBATCH --array=0-{2}\n#SBATCH --output={3}/logs/slurm_%a.out\n",
      shell_quote(args.file), shell_quote(script.string()), members - 1, fs::absolute(spec.out).string());
  for (const auto& o : args.sbatch_options) text += "#SBATCH " + o + "\n";
  text += fmt::format("cd {}\nexec {} sweep {} --member \"$SLURM_ARRAY_TASK_ID\"{}\n",
                      shell_quote(fs::current_path().string()), shell_quote(self_executable()), shell_quote(args.file),
                      args.launch > 0 ? fmt::format(" --launch {}", args.launch) : "");
  write_file_atomic(script, text);
  std::cout << fmt::format("wrote {} ({} members); submit it with: sbatch {}\n", script.string(), members,
                           script.string());
}

// Runs the members `parallel` at a time; the outcome of each.
std::vector<Outcome> run_members(SweepRunner& runner, const std::vector<SweepMember>& members, int64_t parallel) {
  std::vector<Outcome> outcomes(members.size(), Outcome::interrupted);
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; !g_stop && (i = next++) < members.size();) try {
        outcomes[i] = runner.run(members[i]);
      } catch (const std::exception& e) {  // one member's trouble (a missing file, a bad eval.json) is its own
        std::cerr << fmt::format("== {}: {}", members[i].name, e.what()) << std::endl;
        outcomes[i] = Outcome::failed;
      }
  };
  std::vector<std::thread> pool;
  for (int64_t t = 0; t < std::min<int64_t>(parallel, static_cast<int64_t>(members.size())); ++t)
    pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  return outcomes;
}

// The report of the finished members; the others are named in it (failed, unfinished or not run).
void report_sweep(const SweepSpec& spec, const std::vector<SweepMember>& members,
                  const std::map<std::string, std::string>& outcome_of) {
  std::vector<RunResult> runs;
  std::vector<std::string> missing;
  for (const auto& m : members) {
    if (fs::is_regular_file(fs::path(spec.out) / m.name / "eval.json"))
      runs.push_back(read_run(fs::path(spec.out) / m.name));
    else
      missing.push_back(fmt::format("{} ({})", m.name, outcome_of.count(m.name) ? outcome_of.at(m.name) : "not run"));
  }
  if (runs.empty()) return;
  std::string baseline = spec.baseline;  // a failed baseline must not cost the others their report
  if (!baseline.empty() &&
      std::none_of(runs.begin(), runs.end(), [&](const RunResult& r) { return r.group == baseline; })) {
    log::warn("sweep: the baseline '{}' has no finished run; the report compares against the first member", baseline);
    baseline.clear();
  }
  auto report = make_report(runs, baseline);
  if (!missing.empty())
    report.warnings.push_back(fmt::format("{} member(s) have no results and are not in the table: {}", missing.size(),
                                          fmt::join(missing, ", ")));
  write_report(report, runs, spec.out);
  std::cout << "\n"
            << report_markdown(report) << "\nreport: " << (fs::path(spec.out) / "report.md").string() << ", "
            << (fs::path(spec.out) / "report.csv").string() << "\n";
}

void run_sweep(const SweepArgs& args) {
  const auto spec = load_sweep(args.file);
  auto members = sweep_members(spec);
  check_sweep_members(members);
  if (args.member >= static_cast<int64_t>(members.size()))
    throw UsageError(fmt::format("sweep: --member {} is out of range: the sweep has {} members (0 .. {})", args.member,
                                 members.size(), members.size() - 1));
  if (args.emit == "slurm") return emit_slurm(args, spec, members.size());
  SweepRunner runner(spec, args.parallel, args.launch);
  if (args.dry_run) {
    for (size_t i = 0; i < members.size(); ++i) {
      std::vector<std::string> quoted;
      for (const auto& a : runner.train_command(members[i])) quoted.push_back(shell_quote(a));
      std::cout << fmt::format("[{}] {}: {}\n", i, members[i].name, fmt::join(quoted, " "));
    }
    return;
  }
  fs::create_directories(spec.out);
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
  const std::vector<SweepMember> chosen =
      args.member >= 0 ? std::vector<SweepMember>{members[static_cast<size_t>(args.member)]} : members;
  const auto outcomes = run_members(runner, chosen, args.parallel);
  std::vector<std::string> failed, unfinished;
  std::map<std::string, std::string> outcome_of;
  for (size_t i = 0; i < chosen.size(); ++i) {
    if (outcomes[i] == Outcome::failed) failed.push_back(chosen[i].name), outcome_of[chosen[i].name] = "failed";
    if (outcomes[i] == Outcome::interrupted)
      unfinished.push_back(chosen[i].name), outcome_of[chosen[i].name] = "unfinished";
  }
  if (args.member < 0) report_sweep(spec, members, outcome_of);
  if (!failed.empty())
    throw Error(fmt::format("sweep: {} member(s) failed: {}", failed.size(), fmt::join(failed, ", ")));
  if (!unfinished.empty())
    throw Error(fmt::format("sweep: stopped with {} member(s) unfinished ({}); run it again to resume",
                            unfinished.size(), fmt::join(unfinished, ", ")));
}

}  // namespace

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
  auto args = std::make_shared<SweepArgs>();
  cmd->add_option("sweep", args->file, "Sweep file (YAML: out, configs, set, grid, members, seeds, baseline, evals)")
      ->required();
  cmd->add_option("--parallel", args->parallel, "Members trained at once (CPU threads split between them)")
      ->check(kPositive);
  cmd->add_option("--member", args->member, "Run only member I (0-based; what each array task of --emit slurm runs)")
      ->check(kNonNegative);
  cmd->add_option("--launch", args->launch,
                  "Train each member data-parallel as `ember launch -n N -- ember train ...` (N ranks here)")
      ->check(kPositive);
  cmd->add_option("--emit", args->emit, "Write <out>/sweep.sbatch, a Slurm array with one task per member, and stop")
      ->check(CLI::IsMember({"slurm"}));
  cmd->add_option("--sbatch-option", args->sbatch_options, "An #SBATCH line for --emit slurm (repeatable)");
  cmd->add_flag("--dry-run", args->dry_run, "Print each member's training command and stop");
  cmd->callback([args] { run_sweep(*args); });
}

}  // namespace ember::cli
