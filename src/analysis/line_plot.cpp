#include "ember/analysis/line_plot.h"

#include <algorithm>

#include "ember/analysis/plot_output.h"
#include "ember/util/error.h"

#ifdef EMBER_HAVE_PLPLOT
#include <plplot.h>
#endif

namespace ember {

void write_line_chart(const std::filesystem::path& figure, const LineChart& chart) {
  check_plot_path(figure);
  if (chart.series.empty()) throw UsageError("--plot: nothing to plot");
  for (const auto& s : chart.series)
    if (s.x.empty() || s.x.size() != s.y.size()) throw UsageError("--plot: series '" + s.label + "' has no points");
#ifdef EMBER_HAVE_PLPLOT
  double x0 = chart.series.front().x.front(), x1 = x0;
  for (const auto& s : chart.series)
    for (double x : s.x) x0 = std::min(x0, x), x1 = std::max(x1, x);
  const double pad = std::max(0.5, 0.02 * (x1 - x0));
  start_figure(figure);
  const double span = chart.y_max - chart.y_min, top = chart.y_max + 0.07 * span * chart.series.size();
  plenv(x0 - pad, x1 + pad, chart.y_min, top, 0, 0);  // headroom above y_max for the labels
  pllab(chart.x_label.c_str(), chart.y_label.c_str(), chart.title.c_str());
  static const int kColors[] = {1, 9, 3, 8, 4, 13, 10, 12};  // red, blue, green, brown, ...
  for (size_t i = 0; i < chart.series.size(); ++i) {
    const auto& s = chart.series[i];
    plcol0(kColors[(s.color < 0 ? i : static_cast<size_t>(s.color)) % 8]);
    plwidth(2.0);
    pllsty(s.dashed ? 2 : 1);
    plline(static_cast<PLINT>(s.x.size()), s.x.data(), s.y.data());
    pllsty(1);
    plpoin(static_cast<PLINT>(s.x.size()), s.x.data(), s.y.data(), 17);  // filled dots on the points
    plwidth(1.0);
    plptex(x1 + pad - 0.02 * (x1 - x0 + 2 * pad), top - 0.07 * span * (i + 0.7), 1.0, 0.0, 1.0, s.label.c_str());
  }
  finish_figure(figure);
#endif
}

}  // namespace ember
