// The figures of a report (docs/experiments.md), each as PNG and SVG: loss curves (training and
// validation against tokens), validation loss per member, per-bucket perplexity bars, the sampled
// epsilon over training and the cosine histogram of the final input embeddings. One line or bar per
// member: the mean over its seeds (whiskers: sample standard deviation).
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "ember/experiment/run_report.h"

namespace ember {

struct ReportFigure {
  std::string name;   // file stem: <name>.png and <name>.svg
  std::string title;  // what report.md calls it
};

// Writes every figure the runs have data for into `dir` (needs PLplot: callers check
// plotting_available); returns them in the order report.md lists them.
std::vector<ReportFigure> write_report_figures(const Report& report, const std::vector<RunResult>& runs,
                                               const std::filesystem::path& dir);

// The "## Figures" section of report.md for the figures written.
std::string figures_markdown(const std::vector<ReportFigure>& figures);

}  // namespace ember
