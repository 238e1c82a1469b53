#include "ember/analysis/line_plot.h"

#include <algorithm>

#include "ember/analysis/plot_output.h"
#include "ember/util/error.h"

#ifdef EMBER_HAVE_PLPLOT
#include <plplot.h>
#endif

namespace ember {

#ifdef EMBER_HAVE_PLPLOT
namespace {

constexpr int kColors[] = {1, 9, 3, 8, 4, 13, 10, 12};  // red, blue, green, brown, aquamarine, ...
constexpr const char* kMarkers[] = {"●", "■", "▲", "◆", "▼", "★", "○", "□"};

struct Style {
  PLINT color, line_style;
  const char* marker;
};

Style style_of(const LineSeries& s, size_t i) {
  const size_t c = s.color < 0 ? i : static_cast<size_t>(s.color), m = s.marker < 0 ? i : static_cast<size_t>(s.marker);
  return {kColors[c % 8], static_cast<PLINT>(s.dashed ? 2 : 1 + (c / 8) % 8), kMarkers[m % 8]};
}

// The legend in the chart's top-right corner: each labelled series' line sample and marker.
void draw_legend(const LineChart& chart) {
  std::vector<PLINT> opts, colors, styles;
  std::vector<PLFLT> widths, scales;
  std::vector<const char*> texts, markers;
  std::vector<PLINT> counts;
  for (size_t i = 0; i < chart.series.size(); ++i) {
    const auto& s = chart.series[i];
    if (s.label.empty()) continue;
    const auto st = style_of(s, i);
    opts.push_back((s.line ? PL_LEGEND_LINE : 0) | PL_LEGEND_SYMBOL);
    colors.push_back(st.color), styles.push_back(st.line_style), widths.push_back(2.0);
    scales.push_back(0.8), counts.push_back(s.line ? 2 : 1);
    texts.push_back(s.label.c_str()), markers.push_back(st.marker);
  }
  if (texts.empty()) return;
  const auto n = static_cast<PLINT>(texts.size());
  PLFLT w = 0, h = 0;
  pllegend(&w, &h, PL_LEGEND_BACKGROUND | PL_LEGEND_BOUNDING_BOX, PL_POSITION_INSIDE | PL_POSITION_TOP | PL_POSITION_RIGHT,
           0.01, 0.01, 0.08, 0, 15, 1, n, 1, n, opts.data(), 1.0, 0.8, 1.6, 0.0, colors.data(), texts.data(), nullptr,
           nullptr, nullptr, nullptr, colors.data(), styles.data(), widths.data(), colors.data(), scales.data(),
           counts.data(), markers.data());
}

}  // namespace
#endif

void write_line_chart(const std::filesystem::path& figure, const LineChart& chart) {
  check_plot_path(figure);
  if (chart.series.empty()) throw UsageError("--plot: nothing to plot");
  for (const auto& s : chart.series)
    if (s.x.empty() || s.x.size() != s.y.size()) throw UsageError("--plot: series '" + s.label + "' has no points");
#ifdef EMBER_HAVE_PLPLOT
  double x0 = chart.series.front().x.front(), x1 = x0;
  for (const auto& s : chart.series)
    for (double x : s.x) x0 = std::min(x0, x), x1 = std::max(x1, x);
  const double pad = std::max(0.5, 0.03 * (x1 - x0));
  size_t labelled = 0;
  for (const auto& s : chart.series) labelled += !s.label.empty();
  start_figure(figure);
  const double span = chart.y_max - chart.y_min, top = chart.y_max + 0.085 * span * labelled;
  plenv(x0 - pad, x1 + pad, chart.y_min, top, 0, 0);  // headroom above y_max for the legend
  pllab(chart.x_label.c_str(), chart.y_label.c_str(), "");
  plmtex("t", chart.note.empty() ? 2.0 : 2.6, 0.5, 0.5, chart.title.c_str());
  if (!chart.note.empty()) {
    plschr(0.0, 0.8);
    plmtex("t", 1.0, 0.5, 0.5, chart.note.c_str());
    plschr(0.0, 1.0);
  }
  for (size_t i = 0; i < chart.series.size(); ++i) {
    const auto& s = chart.series[i];
    const auto st = style_of(s, i);
    plcol0(st.color);
    plwidth(2.0);
    pllsty(st.line_style);
    if (s.line) plline(static_cast<PLINT>(s.x.size()), s.x.data(), s.y.data());
    pllsty(1);
    plschr(0.0, 0.8);
    if (s.markers) plstring(static_cast<PLINT>(s.x.size()), s.x.data(), s.y.data(), st.marker);
    plschr(0.0, 1.0);
    plwidth(1.0);
  }
  draw_legend(chart);
  finish_figure(figure);
#endif
}

}  // namespace ember
