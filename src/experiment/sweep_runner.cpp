#include "ember/experiment/sweep_runner.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "ember/run/run_config.h"
#include "ember/experiment/child_process.h"
#include "ember/experiment/run_report.h"
#include "ember/util/cpus.h"
#include "ember/util/error.h"
#include "ember/util/files.h"
#include "ember/util/log.h"

namespace ember {
namespace fs = std::filesystem;
namespace {

std::atomic<bool> g_stop{false};

bool has_checkpoints(const fs::path& dir) { return fs::exists(dir / "checkpoints") && !fs::is_empty(dir / "checkpoints"); }

// The run's last evaluation is at its configured last step (a preempted run exits 0 earlier).
bool finished(const fs::path& dir) {
  const auto cfg = load_config({(dir / "config.yaml").string()}, {});
  return read_run(dir).steps >= static_cast<double>(cfg.train.steps);
}

}  // namespace

void request_sweep_stop(int sig) {
  g_stop = true;
  signal_children(sig);
}

SweepRunner::SweepRunner(const SweepSpec& spec, SweepRunOptions options) : spec_(spec), options_(std::move(options)) {
  if (options_.executable.empty()) options_.executable = self_executable();
  const int64_t processes = options_.parallel * std::max<int64_t>(options_.launch, 1);
  threads_ = processes > 1 ? std::max<int64_t>(1, usable_cpus() / processes) : 0;
}

fs::path SweepRunner::run_dir(const SweepMember& m) const { return fs::path(spec_.out) / m.name; }

std::vector<std::string> SweepRunner::train_command(const SweepMember& m) const {
  const auto& exe = options_.executable;
  std::vector<std::string> cmd{exe, "train"};
  if (options_.launch > 0) cmd = {exe, "launch", "-n", std::to_string(options_.launch), "--", exe, "train"};
  if (has_checkpoints(run_dir(m))) {
    cmd.insert(cmd.end(), {"--resume", "--run-dir", run_dir(m).string()});
  } else {
    for (const auto& c : m.configs) cmd.insert(cmd.end(), {"-c", c});
    for (const auto& o : m.overrides) cmd.insert(cmd.end(), {"--set", o});
    cmd.insert(cmd.end(), {"--set", "log.dir=" + spec_.out, "--set", "log.name=" + m.name});
  }
  if (threads_ > 0) cmd.insert(cmd.end(), {"--set", "train.threads=" + std::to_string(threads_)});
  return cmd;
}

MemberOutcome SweepRunner::run(const SweepMember& m) {
  const auto dir = run_dir(m);
  if (fs::is_regular_file(dir / "eval.json")) return say(m, "complete, skipped"), MemberOutcome::done;
  say(m, has_checkpoints(dir) ? "resuming" : "training");
  std::string log;
  if (options_.parallel > 1) {  // members side by side: each its own log
    fs::create_directories(fs::path(spec_.out) / "logs");
    log = (fs::path(spec_.out) / "logs" / (m.name + ".log")).string();
  }
  const int rc = run_child(train_command(m), log);
  if (rc != 0)
    return say(m, fmt::format("training failed (exit {}){}", rc, log.empty() ? "" : ", see " + log)),
           MemberOutcome::failed;
  if (!finished(dir))
    return say(m, "stopped before its last step (resume by running the sweep again)"), MemberOutcome::interrupted;
  return evaluate(m, log);
}

// Perplexity, then each task, then capacity; eval.json last, as the member's complete marker.
MemberOutcome SweepRunner::evaluate(const SweepMember& m, const std::string& log) {
  const auto dir = run_dir(m), tmp = dir / "eval.json.tmp";
  const auto& exe = options_.executable;
  std::vector<std::string> eval{exe, "eval", dir.string(), "--json", "--batches", std::to_string(spec_.eval_batches)};
  if (spec_.buckets) eval.push_back("--buckets");
  if (const int rc = run_child(eval, log, tmp.string()); rc != 0) return after_failed_step(m, "evaluation", rc, {tmp});
  auto results = nlohmann::json::parse(read_text_file(tmp));
  for (const auto& task : spec_.tasks) {
    const auto out = dir / ("task_" + task.name + ".json");
    const int rc = run_child({exe, "eval", dir.string(), "--task", enum_name(task.kind), task.file, "--json", "--limit",
                              std::to_string(task.limit)},
                             log, out.string());
    if (rc != 0) return after_failed_step(m, "task " + task.name, rc, {tmp, out});
    results["tasks"][task.name] = nlohmann::json::parse(read_text_file(out));
    fs::remove(out);
  }
  if (spec_.capacity) {
    const auto out = dir / "capacity.json.tmp";
    if (const int rc = run_child({exe, "capacity", dir.string(), "--json"}, log, out.string()); rc != 0)
      return after_failed_step(m, "capacity", rc, {tmp, out});
    results["capacity"] = nlohmann::json::parse(read_text_file(out)).at(0);
    fs::remove(out);
  }
  write_file_atomic(dir / "eval.json", results.dump());
  fs::remove(tmp);
  say(m, "complete");
  return MemberOutcome::done;
}

// An evaluation step that did not finish: its partial outputs go; stopped by the sweep's own
// SIGINT / SIGTERM it leaves the member unfinished (the next sweep evaluates it), else failed.
MemberOutcome SweepRunner::after_failed_step(const SweepMember& m, const std::string& step, int rc,
                                             const std::vector<fs::path>& partial) {
  for (const auto& f : partial) fs::remove(f);
  if (g_stop && (rc == 128 + SIGINT || rc == 128 + SIGTERM))
    return say(m, step + " stopped (the next sweep evaluates the trained member)"), MemberOutcome::interrupted;
  return say(m, fmt::format("{} failed (exit {})", step, rc)), MemberOutcome::failed;
}

void SweepRunner::say(const SweepMember& m, const std::string& what) {
  std::lock_guard<std::mutex> lock(print_);
  std::cout << fmt::format("== {}: {}", m.name, what) << std::endl;
}

std::vector<MemberOutcome> SweepRunner::run_all(const std::vector<SweepMember>& members) {
  std::vector<MemberOutcome> outcomes(members.size(), MemberOutcome::interrupted);
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; !g_stop && (i = next++) < members.size();) try {
        outcomes[i] = run(members[i]);
      } catch (const std::exception& e) {  // one member's trouble (a missing file, a bad eval.json) is its own
        std::cerr << fmt::format("== {}: {}", members[i].name, e.what()) << std::endl;
        outcomes[i] = MemberOutcome::failed;
      }
  };
  std::vector<std::thread> pool;
  for (int64_t t = 0; t < std::min<int64_t>(options_.parallel, static_cast<int64_t>(members.size())); ++t)
    pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  return outcomes;
}

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

void run_sweep(const SweepSpec& spec, const std::vector<SweepMember>& members, const SweepRunOptions& options) {
  if (options.member >= static_cast<int64_t>(members.size()))
    throw UsageError(fmt::format("sweep: --member {} is out of range: the sweep has {} members (0 .. {})",
                                 options.member, members.size(), members.size() - 1));
  fs::create_directories(spec.out);
  const std::vector<SweepMember> chosen =
      options.member >= 0 ? std::vector<SweepMember>{members[static_cast<size_t>(options.member)]} : members;
  SweepRunner runner(spec, options);
  const auto outcomes = runner.run_all(chosen);
  std::vector<std::string> failed, unfinished;
  std::map<std::string, std::string> outcome_of;
  for (size_t i = 0; i < chosen.size(); ++i) {
    if (outcomes[i] == MemberOutcome::failed) failed.push_back(chosen[i].name), outcome_of[chosen[i].name] = "failed";
    if (outcomes[i] == MemberOutcome::interrupted)
      unfinished.push_back(chosen[i].name), outcome_of[chosen[i].name] = "unfinished";
  }
  if (options.member < 0 && options.report) report_sweep(spec, members, outcome_of);
  if (!failed.empty())
    throw Error(fmt::format("sweep: {} member(s) failed: {}", failed.size(), fmt::join(failed, ", ")));
  if (!unfinished.empty())
    throw Error(fmt::format("sweep: stopped with {} member(s) unfinished ({}); run it again to resume",
                            unfinished.size(), fmt::join(unfinished, ", ")));
}

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+") ==
                        std::string::npos)
    return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

fs::path write_slurm_array(const SweepSpec& spec, const std::string& sweep_file, size_t members,
                           const std::vector<std::string>& sbatch_options, const SweepRunOptions& options,
                           const std::string& subcommand) {
  if (members == 0) throw UsageError("sweep: --emit slurm: the sweep has no members");
  fs::create_directories(fs::path(spec.out) / "logs");
  const auto script = fs::path(spec.out) / "sweep.sbatch";
  const auto exe = options.executable.empty() ? self_executable() : options.executable;
  std::string text = fmt::format(
      "#!/bin/bash\n# Written by `ember {4} {0} --emit slurm`: one array task per member. Submit with\n"
      "#   sbatch {1}\n# then, when every task is done: ember {4} {0}   (writes the report; nothing is retrained)\n"
      "#SBATCH --job-name=ember-{5}\n#SBATCH --array=0-{2}\n#SBATCH --output={3}/logs/slurm_%a.out\n",
      shell_quote(sweep_file), shell_quote(script.string()), members - 1, fs::absolute(spec.out).string(), subcommand,
      subcommand.substr(0, subcommand.find(' ')));
  for (const auto& o : sbatch_options) text += "#SBATCH " + o + "\n";
  text += fmt::format("cd {}\nexec {} {} {} --member \"$SLURM_ARRAY_TASK_ID\"{}\n",
                      shell_quote(fs::current_path().string()), shell_quote(exe), subcommand, shell_quote(sweep_file),
                      options.launch > 0 ? fmt::format(" --launch {}", options.launch) : "");
  write_file_atomic(script, text);
  return script;
}

}  // namespace ember
