// Grouped bar charts as PNG or SVG (by the file's extension; plot_output.h): one group of bars per
// category (e.g. a frequency bucket), one bar per series (e.g. a sweep member) with an optional
// whisker of +- its spread, on a linear or logarithmic value axis.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace ember {

struct BarSeries {
  std::string label;
  std::vector<double> values;  // one per category; NaN: no bar
  std::vector<double> spread;  // empty, or one per category: a whisker from value - s to value + s
};

struct BarChart {
  std::string title, y_label;
  std::vector<std::string> categories;  // written under each group
  std::vector<BarSeries> series;
  bool log_y = false;     // values must be positive
  bool from_zero = true;  // linear axis from 0; false: fitted to the bars (small differences show)
};

// Throws as check_plot_path, UsageError when there is nothing to draw or a series' size differs from
// the categories', Error when PLplot writes nothing.
void write_bar_chart(const std::filesystem::path& figure, const BarChart& chart);

}  // namespace ember
