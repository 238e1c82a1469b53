// A run's summary (docs/experiments.md, "Run summaries"): the final values `ember report` reads from
// a run directory, as one small JSON file, so that a report can be rebuilt without the run directory
// (experiments/*/runs/ keep them in git). The per-step curves are not in it: a report from summaries
// has no loss or epsilon curves.
#pragma once
#include <filesystem>

#include <nlohmann/json.hpp>

#include "ember/experiment/run_report.h"

namespace ember {

inline constexpr const char* kSummaryFile = "summary.json";

// The summary of a run read by read_run; numbers exact (they read back as the same doubles).
nlohmann::json run_summary_json(const RunResult& run);
// Writes dir/<the run's name>/summary.json; returns that file.
std::filesystem::path write_run_summary(const RunResult& run, const std::filesystem::path& dir);

// The run a summary describes, as read_run would give it without the curves. UsageError naming the
// file and the key when one is missing or of the wrong type.
RunResult read_run_summary(const std::filesystem::path& file);

// A summary file, or a directory holding summary.json and no config.yaml.
bool is_run_summary(const std::filesystem::path& path);
// read_run_summary for a summary, else read_run.
RunResult read_run_or_summary(const std::filesystem::path& path);

}  // namespace ember
