// The comparison of a set of runs (docs/experiments.md): one row per member (a run, or the seeds of
// one sweep member pooled: mean and sample standard deviation), the settings in which the runs
// differ, parameters, tokens, final train / validation loss and perplexity, frequency-bucket
// perplexities when evaluated, tokens/s, each metric relative to a baseline member, and the paired
// differences against the baseline over the seeds both have (experiment/paired_report.h). Written
// as report.md, report.csv and, with PLplot, loss curves.
#pragma once
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "ember/experiment/multiple_comparisons.h"
#include "ember/experiment/paired_stats.h"

namespace ember {

inline constexpr double kMissing = std::numeric_limits<double>::quiet_NaN();  // shown as "n/a", an empty CSV cell

struct RunResult {
  std::filesystem::path dir;
  std::string group;                            // the directory name without a _seed<N> suffix
  int64_t seed = 0;                             // the config's train.seed (data order and initialisation)
  std::map<std::string, std::string> settings;  // the resolved config, flattened: "model.mixer.kind" -> "titans"
  double params = 0, steps = 0, tokens = 0;
  double train_loss = 0, tokens_per_s = 0;
  double val_loss = kMissing, val_ppl = kMissing;  // NaN when the run has no evaluation record
  double val_tokens = kMissing;                    // the tokens that evaluation scored
  std::string val_source;                          // "eval.json" or "metrics.jsonl"
  double rare_ppl = -1, frequent_ppl = -1;  // the rare / most frequent bucket (run_report.cpp); -1: not evaluated
  std::string rare_range;                   // the rare bucket's frequency range
  std::map<std::string, double> tasks;      // "<task> acc" (and "<task> acc_norm" for choice) -> value
  std::vector<std::pair<double, double>> val_curve, train_curve;  // (tokens, loss)
  struct Bucket {
    std::string range;  // the frequency range, as ember eval prints it
    double tokens = 0, perplexity = 0;  // tokens: NaN when not known (a summary without it)
  };
  std::vector<Bucket> buckets;  // eval.json's frequency buckets, rarest first
  struct Epsilon {
    double tokens = 0, input = 0, head = 0;
  };
  std::vector<Epsilon> epsilon_curve;     // eval.capacity_every records (sampled epsilon during training)
  bool tied = false;                      // the head is the input table (its epsilon is the input's)
  std::vector<int64_t> cosine_histogram;  // eval.json's capacity: the input embedding's pairwise cosines
  double capacity_mu = kMissing, capacity_epsilon = kMissing;  // NaN when not evaluated
};

// Reads dir/config.yaml, metrics.jsonl and (when present) eval.json, the full evaluation a sweep
// writes; otherwise the run's last logged evaluation. UsageError naming the file when one is missing.
RunResult read_run(const std::filesystem::path& dir);

std::string run_name(const std::filesystem::path& dir);   // the directory's last component
std::string run_group(const std::filesystem::path& dir);  // run_name without a _seed<N> suffix

struct Stat {
  double mean = 0, std = 0;  // std: sample standard deviation, 0 for one run
};
Stat stat_of(const std::vector<double>& values);  // mean and sample standard deviation

struct ReportRow {
  std::string member;
  std::vector<std::filesystem::path> runs;
  std::map<std::string, std::string> settings;  // only the keys in which members differ
  Stat params, tokens, train_loss, val_loss, val_ppl, val_tokens, rare_ppl, frequent_ppl, tokens_per_s;
  bool has_buckets = false;
  std::map<std::string, Stat> tasks;                             // the tasks every run of the member has
  double val_ppl_change = kMissing, rare_ppl_change = kMissing;  // percent relative to the baseline's mean
  std::map<std::string, Stat> values;  // each of Report::metrics that every run of the row has
  // A member's row pools its runs; it also holds one row per run (seed_rows, ascending seed), whose
  // `seed` is the run's and whose `diffs` are metric - the baseline's at the same seed.
  int64_t seed = -1;  // a seed row's seed; -1 on a member's row
  std::vector<ReportRow> seed_rows;
  std::map<std::string, double> diffs;
  std::vector<int64_t> seeds;                // the member's seeds, ascending
  std::vector<int64_t> common_seeds;         // those the baseline has too (empty for the baseline)
  std::map<std::string, PairedDiff> paired;  // per metric, over common_seeds (not for the baseline)
};

// The final input embedding's exact mu and epsilon (eval.json's capacity), paired like the others.
inline constexpr const char* kInputMu = "input mu";
inline constexpr const char* kInputEpsilon = "input epsilon";

struct Report {
  std::string baseline;
  Correction correction = Correction::holm;  // of each metric's p values across the compared members
  std::vector<std::string> varied;    // the settings that differ between members, in key order
  std::vector<std::string> tasks;     // task columns every member has
  // The metrics paired against the baseline: val_loss (the primary one), val_ppl, "ppl <range>" of
  // each frequency bucket (rarest first), the tasks, train_loss, and with a capacity evaluation the
  // final input embedding's "input mu" and "input epsilon".
  std::vector<std::string> metrics;
  std::string rare_range;             // the frequency range of the rare bucket (of the first run)
  std::vector<ReportRow> rows;        // in the order the runs were given
  std::vector<std::string> warnings;  // e.g. validation numbers over different token counts
};

// Pools runs by group; `baseline` names a member (empty: the first). UsageError for an unknown one.
Report make_report(const std::vector<RunResult>& runs, const std::string& baseline,
                   Correction correction = Correction::holm);
std::string report_markdown(const Report& report);
// Per member one row per run (row = seed: its values and its differences from the baseline's run
// of the same seed), then the member's (row = summary: means over its runs and the paired
// statistics); docs/experiments.md lists the columns.
std::string report_csv(const Report& report);
// report.md and report.csv in `dir`, each written whole or not at all, and with PLplot the figures
// of report_figures.h (PNG and SVG), linked from report.md.
void write_report(const Report& report, const std::vector<RunResult>& runs, const std::filesystem::path& dir);

}  // namespace ember
