#include "ember/analysis/cosine_histogram_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "ember/analysis/plot_output.h"
#include "ember/util/error.h"

#ifdef EMBER_HAVE_PLPLOT
#include <plplot.h>
#endif

namespace ember {
namespace {

// The histograms cover [-1, 1] in equal bins; every series has the same number of bins.
struct View {
  int64_t first = 0, last = 0, group = 1;  // visible bins [first, last], merged `group` at a time
  double ymax = 0.0;
};

// Visible range: the occupied bins of all series, padded, at least 0.1 wide, ~150 bars across.
View choose_view(const std::vector<HistogramSeries>& series) {
  const int64_t bins = static_cast<int64_t>(series.front().counts.size());
  View v{bins, 0, 1, 0.0};
  for (const auto& s : series)
    for (int64_t i = 0; i < bins; ++i)
      if (s.counts[i]) v.first = std::min(v.first, i), v.last = std::max(v.last, i);
  const int64_t pad = std::max<int64_t>(50 - (v.last - v.first) / 2, (v.last - v.first) / 10);
  v.first = std::max<int64_t>(v.first - pad, 0);
  v.last = std::min<int64_t>(v.last + pad, bins - 1);
  v.group = std::max<int64_t>(1, (v.last - v.first + 1) / 150);
  return v;
}

// Densities (area 1) of the merged bins of one series, as x and y of a step outline.
void density_outline(const HistogramSeries& s, const View& v, std::vector<double>& x, std::vector<double>& y) {
  const int64_t bins = static_cast<int64_t>(s.counts.size());
  int64_t total = 0;
  for (int64_t c : s.counts) total += c;
  const double width = v.group * 2.0 / bins;
  for (int64_t b = v.first; b <= v.last; b += v.group) {
    int64_t n = 0;
    for (int64_t i = b; i < std::min<int64_t>(b + v.group, bins); ++i) n += s.counts[i];
    const double lo = -1.0 + b * (2.0 / bins), dens = total ? n / (total * width) : 0.0;
    x.insert(x.end(), {lo, lo + width});
    y.insert(y.end(), {dens, dens});
  }
}

}  // namespace

std::pair<double, double> cosine_axis_range(const std::vector<HistogramSeries>& series) {
  const View v = choose_view(series);
  const auto bins = static_cast<double>(series.front().counts.size());
  double x0 = -1.0 + v.first * 2.0 / bins, x1 = -1.0 + (v.last + 1) * 2.0 / bins;
  for (const auto& s : series)  // epsilon = mu + 2 sigma may pass 1: widen the axis to show every marker
    x0 = std::min({x0, s.mu - 0.03, s.epsilon - 0.03}), x1 = std::max({x1, s.mu + 0.03, s.epsilon + 0.03});
  return {x0, x1};
}

void write_cosine_histogram(const std::filesystem::path& png, const std::vector<HistogramSeries>& series) {
  check_plot_path(png);
  if (series.empty()) throw UsageError("--plot: nothing to plot");
  for (const auto& s : series)
    if (s.counts.empty() || s.counts.size() != series.front().counts.size())
      throw UsageError("--plot: no histogram for " + s.label + " (the Gram-identity mode has none)");
#ifdef EMBER_HAVE_PLPLOT
  View v = choose_view(series);
  std::vector<std::vector<double>> xs(series.size()), ys(series.size());
  for (size_t i = 0; i < series.size(); ++i) {
    density_outline(series[i], v, xs[i], ys[i]);
    v.ymax = std::max(v.ymax, *std::max_element(ys[i].begin(), ys[i].end()));
  }
  const auto [x0, x1] = cosine_axis_range(series);
  start_figure(png);
  const double top = (1.1 + 0.08 * static_cast<double>(series.size())) * v.ymax;  // headroom for the labels
  plenv(x0, x1, 0.0, top, 0, 0);
  pllab("cosine similarity", "density", "Pairwise cosines: mu dashed, eps = mu + 2 sigma solid");
  static const int kColors[] = {1, 9, 3, 8, 4, 13, 10, 12};  // red, blue, green, brown, ...
  for (size_t i = 0; i < series.size(); ++i) {
    const auto& s = series[i];
    plcol0(kColors[i % 8]);
    plwidth(2.0);
    plline(static_cast<PLINT>(xs[i].size()), xs[i].data(), ys[i].data());
    PLFLT mx[2] = {s.mu, s.mu}, ex[2] = {s.epsilon, s.epsilon}, yy[2] = {0.0, top};
    pllsty(2);
    plline(2, mx, yy);
    pllsty(1);
    plline(2, ex, yy);
    plwidth(1.0);
    const std::string text =
        fmt::format("{}{}: mu {:.4f}, eps {:.4f}", s.label, s.sampled ? " (sampled)" : "", s.mu, s.epsilon);
    plptex(x1 - 0.02 * (x1 - x0), top - v.ymax * 0.08 * (static_cast<double>(i) + 0.8), 1.0, 0.0, 1.0, text.c_str());
  }
  finish_figure(png);
#endif
}

}  // namespace ember
