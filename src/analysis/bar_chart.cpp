#include "ember/analysis/bar_chart.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "ember/analysis/plot_output.h"
#include "ember/util/error.h"

#ifdef EMBER_HAVE_PLPLOT
#include <plplot.h>
#endif

namespace ember {
namespace {

void check_chart(const BarChart& chart) {
  if (chart.categories.empty() || chart.series.empty()) throw UsageError("--plot: nothing to plot");
  for (const auto& s : chart.series) {
    if (s.values.size() != chart.categories.size() || (!s.spread.empty() && s.spread.size() != s.values.size()))
      throw UsageError("--plot: series '" + s.label + "' does not have one value per category");
    for (double v : s.values)
      if (chart.log_y && !(v > 0) && !std::isnan(v))
        throw UsageError("--plot: series '" + s.label + "' has a non-positive value on a logarithmic axis");
  }
}

// The value axis' range over every bar and whisker (log10 units on a log axis), padded.
std::pair<double, double> value_range(const BarChart& chart) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const auto& s : chart.series)
    for (size_t c = 0; c < s.values.size(); ++c) {
      if (std::isnan(s.values[c])) continue;
      const double d = s.spread.empty() ? 0.0 : s.spread[c];
      lo = std::min(lo, s.values[c] - d), hi = std::max(hi, s.values[c] + d);
    }
  if (!std::isfinite(lo)) throw UsageError("--plot: every bar is empty");
  if (chart.log_y) return {std::log10(std::max(lo, 1e-300)) - 0.05, std::log10(hi) + 0.05 + 0.12 * chart.series.size()};
  const double pad = 0.1 * std::max(hi - lo, 1e-3 * std::abs(hi));
  const double base = chart.from_zero ? std::min(0.0, lo < 0 ? lo - pad : 0.0) : lo - pad;  // whiskers below 0 stay in
  const double span = std::max(hi - base, 1e-12);
  return {base, hi + span * (0.05 + 0.07 * chart.series.size())};  // headroom for the legend
}

}  // namespace

void write_bar_chart(const std::filesystem::path& figure, const BarChart& chart) {
  check_plot_path(figure);
  check_chart(chart);
  const auto [y0, y1] = value_range(chart);
#ifdef EMBER_HAVE_PLPLOT
  const auto to_axis = [&](double v) { return chart.log_y ? std::log10(std::max(v, 1e-300)) : v; };
  const size_t groups = chart.categories.size(), n = chart.series.size();
  const double width = 0.8 / static_cast<double>(n);  // the bars of a group fill 80% of its slot
  start_figure(figure);
  plenv(0.0, static_cast<double>(groups), y0, y1, 0, -2);
  plbox(!chart.log_y && y0 < 0 && y1 > 0 ? "bca" : "bc", 0.0, 0, chart.log_y ? "bcnstvl" : "bcnstv", 0.0, 0);  // a: y = 0
  pllab("", chart.y_label.c_str(), chart.title.c_str());
  for (size_t g = 0; g < groups; ++g)
    plmtex("b", 1.5 + 1.2 * static_cast<double>(g % 2), (g + 0.5) / static_cast<double>(groups), 0.5,
           chart.categories[g].c_str());
  static const int kColors[] = {1, 9, 3, 8, 4, 13, 10, 12};  // as the line charts
  const double base = chart.log_y || !chart.from_zero ? y0 : std::max(0.0, y0);
  for (size_t i = 0; i < n; ++i) {
    const auto& s = chart.series[i];
    plcol0(kColors[i % 8]);
    for (size_t g = 0; g < groups; ++g) {
      if (std::isnan(s.values[g])) continue;
      const double left = g + 0.1 + width * i, top = to_axis(s.values[g]);
      PLFLT x[4] = {left, left, left + width, left + width}, y[4] = {base, top, top, base};
      plfill(4, x, y);
      if (s.spread.empty() || s.spread[g] <= 0) continue;
      PLFLT mid = left + width / 2, lo = to_axis(s.values[g] - s.spread[g]), hi = to_axis(s.values[g] + s.spread[g]);
      plcol0(15);
      plerry(1, &mid, &lo, &hi);
      plcol0(kColors[i % 8]);
    }
    const double step = (y1 - y0) * 0.055;
    plptex(static_cast<double>(groups) * 0.98, y1 - step * (i + 0.8), 1.0, 0.0, 1.0, s.label.c_str());
  }
  finish_figure(figure);
#endif
}

}  // namespace ember
