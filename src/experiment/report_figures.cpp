#include "ember/experiment/report_figures.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "ember/analysis/bar_chart.h"
#include "ember/analysis/cosine_histogram_plot.h"
#include "ember/analysis/line_plot.h"

namespace ember {
namespace {

namespace fs = std::filesystem;
using Members = std::vector<std::pair<std::string, std::vector<const RunResult*>>>;  // report order

Members members_of(const Report& report, const std::vector<RunResult>& runs) {
  Members out;
  for (const auto& row : report.rows) {
    out.push_back({row.member, {}});
    for (const auto& r : runs)
      if (std::find(row.runs.begin(), row.runs.end(), r.dir) != row.runs.end()) out.back().second.push_back(&r);
  }
  return out;
}

// The pointwise mean of the seeds' curves over the points every seed logged.
template <class Point, class X, class Y>
LineSeries mean_curve(const std::string& label, const std::vector<const RunResult*>& runs,
                      const std::vector<Point> RunResult::*curve, X x, Y y) {
  LineSeries s{label, {}, {}};
  size_t n = std::numeric_limits<size_t>::max();
  for (const auto* r : runs) n = std::min(n, (r->*curve).size());
  for (size_t i = 0; i < n; ++i) {
    std::vector<double> ys;
    for (const auto* r : runs) ys.push_back(y((r->*curve)[i]));
    s.x.push_back(x((runs.front()->*curve)[i])), s.y.push_back(stat_of(ys).mean);
  }
  return s;
}

// Fits the y range to the later part of training (the first fifth, far above, is cut off), so the
// members' differences at the end are visible.
void fit_y_range(LineChart& chart) {
  double x_end = 0, lo = 1e300, hi = -1e300;
  for (const auto& s : chart.series)
    if (!s.x.empty()) x_end = std::max(x_end, s.x.back());
  for (const auto& s : chart.series)
    for (size_t i = 0; i < s.x.size(); ++i)
      if (s.x[i] >= 0.2 * x_end || s.x.size() <= 2) lo = std::min(lo, s.y[i]), hi = std::max(hi, s.y[i]);
  const double pad = 0.05 * std::max(hi - lo, 1e-3);
  chart.y_min = lo - pad, chart.y_max = hi + pad;
}

bool write_both(const fs::path& dir, const std::string& name, auto write) {
  write(dir / (name + ".png"));
  write(dir / (name + ".svg"));
  return true;
}

bool loss_curves(const Members& members, const fs::path& dir, bool validation) {
  LineChart chart{validation ? "Validation loss (mean over seeds)" : "Training loss (mean over seeds)",
                  "tokens",
                  "loss (nats/token)",
                  0,
                  1,
                  {}};
  const auto curve = validation ? &RunResult::val_curve : &RunResult::train_curve;
  for (const auto& [name, runs] : members) {
    auto s = mean_curve(
        name, runs, curve, [](const auto& p) { return p.first; }, [](const auto& p) { return p.second; });
    if (!s.x.empty()) chart.series.push_back(std::move(s));
  }
  if (chart.series.empty()) return false;
  fit_y_range(chart);
  return write_both(dir, validation ? "val_loss" : "train_loss",
                    [&](const fs::path& f) { write_line_chart(f, chart); });
}

bool val_loss_bars(const Report& report, const fs::path& dir) {
  BarChart chart{"Final validation loss (whiskers: std over seeds)", "loss (nats/token)", {}, {}, false, false};
  BarSeries s{"validation loss", {}, {}};
  for (const auto& row : report.rows)
    if (std::isfinite(row.val_loss.mean))  // a member without an evaluation has no bar
      chart.categories.push_back(row.member), s.values.push_back(row.val_loss.mean),
          s.spread.push_back(row.val_loss.std);
  if (s.values.empty()) return false;
  chart.series.push_back(std::move(s));
  return write_both(dir, "val_loss_bars", [&](const fs::path& f) { write_bar_chart(f, chart); });
}

bool bucket_bars(const Members& members, const fs::path& dir) {
  BarChart chart{"Perplexity by token frequency in the training data (rarest left)", "perplexity", {}, {}, true, true};
  std::vector<std::string> ranges;  // the same evaluation data for every run: the first run's buckets
  for (const auto& [name, runs] : members)
    if (ranges.empty())
      for (const auto& b : runs.front()->buckets) {
        ranges.push_back(b.range);
        chart.categories.push_back(fmt::format("{} ({:.0f} tokens)", b.range, b.tokens));
      }
  if (ranges.empty()) return false;
  for (const auto& [name, runs] : members) {
    BarSeries s{name, {}, {}};
    for (const auto& range : ranges) {
      std::vector<double> v;
      for (const auto* r : runs)
        for (const auto& b : r->buckets)
          if (b.range == range) v.push_back(b.perplexity);
      const auto stat = stat_of(v);
      s.values.push_back(v.empty() ? std::nan("") : stat.mean), s.spread.push_back(stat.std);
    }
    chart.series.push_back(std::move(s));
  }
  return write_both(dir, "bucket_ppl", [&](const fs::path& f) { write_bar_chart(f, chart); });
}

bool epsilon_curves(const Members& members, const fs::path& dir) {
  LineChart chart{"Sampled epsilon = mu + 2 sigma during training: input solid, untied head dashed",
                  "tokens",
                  "epsilon",
                  1e300,
                  -1e300,
                  {}};
  for (size_t i = 0; i < members.size(); ++i) {
    const auto& [name, runs] = members[i];
    auto input = mean_curve(
        name, runs, &RunResult::epsilon_curve, [](const auto& p) { return p.tokens; },
        [](const auto& p) { return p.input; });
    if (input.x.empty()) continue;
    input.color = static_cast<int>(i);
    chart.series.push_back(std::move(input));
    if (runs.front()->tied) continue;
    auto head = mean_curve(
        name + " head", runs, &RunResult::epsilon_curve, [](const auto& p) { return p.tokens; },
        [](const auto& p) { return p.head; });
    head.color = static_cast<int>(i), head.dashed = true;
    chart.series.push_back(std::move(head));
  }
  if (chart.series.empty()) return false;
  for (const auto& s : chart.series)
    for (double y : s.y) chart.y_min = std::min(chart.y_min, y), chart.y_max = std::max(chart.y_max, y);
  const double pad = 0.05 * std::max(chart.y_max - chart.y_min, 1e-3);
  chart.y_min -= pad, chart.y_max += pad;
  return write_both(dir, "epsilon", [&](const fs::path& f) { write_line_chart(f, chart); });
}

bool cosine_histograms(const Members& members, const fs::path& dir) {
  std::vector<HistogramSeries> series;
  for (const auto& [name, runs] : members) {
    const auto* r = runs.front();  // the first seed: histograms of different seeds are not pooled
    if (r->cosine_histogram.empty()) continue;
    const auto dir = r->dir.lexically_normal();
    const auto run = (dir.has_filename() ? dir : dir.parent_path()).filename().string();
    series.push_back({name + (runs.size() > 1 ? " (" + run + ")" : ""), r->cosine_histogram, r->capacity_mu,
                      r->capacity_epsilon, false});
  }
  if (series.empty()) return false;
  return write_both(dir, "cosine_histogram", [&](const fs::path& f) { write_cosine_histogram(f, series); });
}

}  // namespace

std::vector<ReportFigure> write_report_figures(const Report& report, const std::vector<RunResult>& runs,
                                               const fs::path& dir) {
  const auto members = members_of(report, runs);
  std::vector<ReportFigure> written;
  if (val_loss_bars(report, dir)) written.push_back({"val_loss_bars", "Final validation loss per member"});
  if (loss_curves(members, dir, true)) written.push_back({"val_loss", "Validation loss against tokens"});
  if (loss_curves(members, dir, false)) written.push_back({"train_loss", "Training loss against tokens"});
  if (bucket_bars(members, dir)) written.push_back({"bucket_ppl", "Perplexity per frequency bucket"});
  if (epsilon_curves(members, dir)) written.push_back({"epsilon", "Embedding epsilon during training"});
  if (cosine_histograms(members, dir))
    written.push_back({"cosine_histogram", "Pairwise cosines of the final input embeddings"});
  return written;
}

std::string figures_markdown(const std::vector<ReportFigure>& figures) {
  if (figures.empty()) return "";
  std::string md = "\n## Figures\n\n";
  for (const auto& f : figures)
    md += fmt::format("### {}\n\n![{}]({}.png) ([SVG]({}.svg))\n\n", f.title, f.title, f.name, f.name);
  return md;
}

}  // namespace ember
