// Line charts as PNG (PLplot's pngcairo device): one or more labelled series of (x, y) points on
// shared axes, e.g. per-layer residual alignment of a checkpoint.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace ember {

struct LineSeries {
  std::string label;
  std::vector<double> x, y;
};

struct LineChart {
  std::string title, x_label, y_label;
  double y_min = 0.0, y_max = 1.0;
  std::vector<LineSeries> series;
};

// Throws as check_plot_path (plot_output.h), UsageError for an empty chart, Error when PLplot writes nothing.
void write_line_chart_png(const std::filesystem::path& png, const LineChart& chart);

}  // namespace ember
