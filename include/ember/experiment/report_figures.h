// The figures of a report (docs/experiments.md), each as PNG and SVG: loss curves (training and
// validation against tokens, the latter with the table's full-split values marked), validation loss
// per member (from 0), its paired difference from the baseline with the 95% interval, per-bucket
// perplexity bars, the sampled epsilon over training (input embeddings and untied heads apart) and
// the cosine histogram of the final input embeddings (seeds pooled). One line or bar per member: the
// mean over its seeds (whiskers: sample standard deviation); every title says how many seeds.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "ember/analysis/bar_chart.h"
#include "ember/analysis/cosine_histogram_plot.h"
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

// The val_loss_diff figure's data: per member, its paired val_loss difference from the baseline (the
// mean over the common seeds) and the half-width of its 95% t interval as the whisker, "(not
// resolved)" after the name when the interval holds 0 and "(borderline)" when it does not but the
// corrected p does (paired_stats.h, paired_verdict). No categories below two common seeds.
BarChart paired_difference_chart(const Report& report);

// A member's final input-embedding cosines with its seeds pooled (the counts summed; every seed has
// the same pairs), mu and epsilon the means over those seeds. Empty counts when no run has them.
HistogramSeries pooled_cosine_histogram(const std::string& member, const std::vector<const RunResult*>& runs);

// The "## Figures" section of report.md for the figures written.
std::string figures_markdown(const std::vector<ReportFigure>& figures);

}  // namespace ember
