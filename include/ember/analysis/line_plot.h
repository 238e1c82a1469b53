// Line charts as PNG or SVG (by the file's extension; plot_output.h): one or more labelled series of
// (x, y) points on shared axes, e.g. per-layer residual alignment of a checkpoint or loss curves.
// Every series has its own colour, line style and marker, shown with its label in a legend of line
// samples, so that overlapping lines stay tellable apart.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace ember {

struct LineSeries {
  std::string label;  // empty: not in the legend (e.g. markers that repeat another series' colour)
  std::vector<double> x, y;
  int color = -1;  // index into the chart palette; -1: the series' position
  bool dashed = false;
  bool line = true;  // false: markers only
  int marker = -1;   // index into the marker set; -1: the series' position
  bool markers = true;  // false: the line alone (a fitted curve drawn through many points)
};

struct LineChart {
  std::string title, x_label, y_label;
  double y_min = 0.0, y_max = 1.0;
  std::vector<LineSeries> series;
  std::string note{};  // a smaller second line under the title (empty: none)
};

// Throws as check_plot_path (plot_output.h), UsageError for an empty chart, Error when PLplot writes nothing.
void write_line_chart(const std::filesystem::path& figure, const LineChart& chart);

}  // namespace ember
