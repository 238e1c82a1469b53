// Running a sweep's members (docs/experiments.md). Each member trains as a child process (`ember
// train`, or `ember launch -n N -- ember train`), resumes from its checkpoints when it has some, is
// evaluated (perplexity, tasks, capacity) and is marked complete by its eval.json, written last; a
// complete member is skipped. The report covers the complete members and names the others.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "ember/experiment/sweep_spec.h"

namespace ember {

struct SweepRunOptions {
  int64_t parallel = 1;  // members trained at once; the CPU threads are split between them
  int64_t launch = 0;    // > 0: each member on that many data-parallel ranks (ember launch)
  int64_t member = -1;   // >= 0: run only that member (0-based; a Slurm array task) and write no report
  std::string executable;  // the ember binary the children run (empty: this process's own)
  bool report = true;      // write the sweep's report at the end (a ladder writes its own)
};

enum class MemberOutcome { done, failed, interrupted };

// For a SIGINT / SIGTERM handler (async-signal-safe): no further member starts and `sig` is passed
// on to the running children, so their trainers checkpoint and stop.
void request_sweep_stop(int sig);

class SweepRunner {
 public:
  SweepRunner(const SweepSpec& spec, SweepRunOptions options);
  // The member's training command: a fresh start from the configs, or --resume of its run directory.
  std::vector<std::string> train_command(const SweepMember& m) const;
  // Trains (or resumes), evaluates and marks one member complete; a complete one is skipped.
  MemberOutcome run(const SweepMember& m);
  // `parallel` members at a time; one member's exception is its own failure.
  std::vector<MemberOutcome> run_all(const std::vector<SweepMember>& members);
  std::filesystem::path run_dir(const SweepMember& m) const;

 private:
  MemberOutcome evaluate(const SweepMember& m, const std::string& log);
  MemberOutcome after_failed_step(const SweepMember& m, const std::string& step, int rc,
                                  const std::vector<std::filesystem::path>& partial);
  void say(const SweepMember& m, const std::string& what);

  const SweepSpec& spec_;
  SweepRunOptions options_;
  int64_t threads_ = 0;  // train.threads per child (0: the trainer's default)
  std::mutex print_;
};

// Writes <out>/report.md, report.csv and the figures for the members with an eval.json and prints
// the table; the others are named in a warning with their outcome (`outcome_of`, else "not run").
// Nothing is written when no member is complete.
void report_sweep(const SweepSpec& spec, const std::vector<SweepMember>& members,
                  const std::map<std::string, std::string>& outcome_of);

// The whole life cycle: the chosen members (all, or options.member), then the report (unless one
// member was chosen). An Error names the failed members, or the unfinished ones to resume.
void run_sweep(const SweepSpec& spec, const std::vector<SweepMember>& members, const SweepRunOptions& options);

// <out>/sweep.sbatch: a Slurm array with one task per member, each running
// `ember <subcommand> FILE --member $SLURM_ARRAY_TASK_ID`; `sbatch_options` become #SBATCH lines.
// Returns its path.
std::filesystem::path write_slurm_array(const SweepSpec& spec, const std::string& sweep_file, size_t members,
                                        const std::vector<std::string>& sbatch_options, const SweepRunOptions& options,
                                        const std::string& subcommand = "sweep");

// `s` as one word for a POSIX shell (single-quoted unless it is made of safe characters only).
std::string shell_quote(const std::string& s);

}  // namespace ember
