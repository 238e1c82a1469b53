// ember report RUN...: the comparison table of finished runs (docs/experiments.md).
#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "ember/experiment/run_report.h"
#include "ember/experiment/run_summary.h"
#include "ember/util/files.h"

namespace ember::cli {
namespace {

namespace fs = std::filesystem;

struct ReportArgs {
  std::vector<std::string> runs;
  std::string baseline;
  std::string out;
  std::string summaries;  // also write each run's summary.json under it
  std::string correction = "holm";
};

// A folder with neither config.yaml, metrics.jsonl nor summary.json (a sweep's logs/) is passed
// over, with a note, when several were given (a glob); one given alone must be a run.
bool is_other_folder(const std::filesystem::path& dir, size_t given) {
  if (given < 2 || fs::exists(dir / "config.yaml") || fs::exists(dir / "metrics.jsonl") || is_run_summary(dir))
    return false;
  std::cerr << "report: skipping " << dir.string() << " (not a run directory)\n";
  return true;
}

void run_report(const ReportArgs& args) {
  std::vector<RunResult> runs;
  for (const auto& dir : args.runs)
    if (!is_other_folder(dir, args.runs.size())) runs.push_back(read_run_or_summary(dir));
  Correction correction = Correction::holm;
  enum_from_name(args.correction, correction);  // CLI11 checked the spelling
  const auto report = make_report(runs, args.baseline, correction);
  if (!args.summaries.empty())
    for (const auto& r : runs) write_run_summary(r, args.summaries);
  for (const auto& w : report.warnings) std::cerr << "report: warning: " << w << "\n";
  if (args.out.empty()) {
    std::cout << report_markdown(report);
    return;
  }
  write_report(report, runs, args.out);
  std::cout << read_text_file(std::filesystem::path(args.out) / "report.md");  // with its figures' links
}

}  // namespace

void register_report(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("report", "Compare runs: a table of losses, perplexities and speed against a baseline");
  cmd->footer(
      "Examples:\n"
      "  ember report runs/tied runs/lev --baseline tied\n"
      "  ember report runs/sweep/*/ --out runs/sweep     # report.md, report.csv and the figures\n"
      "  ember report runs/sweep/*/ --summaries keep     # also keep/<run>/summary.json: the final values\n"
      "  ember report keep/*/ --out runs/sweep           # the same table and report.csv from them\n"
      "Runs whose names differ only by _seed<N> are pooled (mean and standard deviation); each member is\n"
      "paired with the baseline seed by seed (train.seed): per-seed differences, their mean and 95% t interval,\n"
      "\"not resolved\" when it contains 0 (docs/experiments.md, \"Paired differences\"). With several members the\n"
      "p values are corrected across them (Holm by default): a member whose interval excludes 0 but whose\n"
      "corrected p does not pass 0.05 is \"borderline\".");
  auto args = std::make_shared<ReportArgs>();
  cmd->add_option("runs", args->runs, "Run directories, or run summaries (summary.json or a folder holding one)")
      ->required();
  cmd->add_option("--baseline", args->baseline, "The member the others are compared with (default: the first)");
  cmd->add_option("--out", args->out,
                  "Also write report.md, report.csv and the figures (PNG and SVG: losses, buckets, epsilon) there");
  cmd->add_option("--summaries", args->summaries,
                  "Also write each run's summary (the final values the report reads) to DIR/<run>/summary.json");
  cmd->add_option("--correction", args->correction,
                  "How each metric's p values are corrected across the members compared with the baseline")
      ->check(CLI::IsMember(enum_spellings<Correction>()))
      ->default_str("holm");
  cmd->callback([args] { run_report(*args); });
}

}  // namespace ember::cli
