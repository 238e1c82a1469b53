#include "ember/experiment/report_figures.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "ember/analysis/bar_chart.h"
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

// "mean over 5 seeds", or "mean over 3-5 seeds per member" when members differ.
std::string seeds_note(const Members& members) {
  size_t lo = std::numeric_limits<size_t>::max(), hi = 0;
  for (const auto& [name, runs] : members) lo = std::min(lo, runs.size()), hi = std::max(hi, runs.size());
  if (hi <= 1) return "one seed";
  return lo == hi ? fmt::format("mean over {} seeds", hi) : fmt::format("mean over {}-{} seeds per member", lo, hi);
}

// Fits the y range to the later part of training (the first fifth, far above, is cut off), so the
// members' differences at the end are visible; every marker-only point stays inside.
void fit_y_range(LineChart& chart) {
  double x_end = 0, lo = 1e300, hi = -1e300;
  for (const auto& s : chart.series)
    if (!s.x.empty()) x_end = std::max(x_end, s.x.back());
  for (const auto& s : chart.series)
    for (size_t i = 0; i < s.x.size(); ++i)
      if (s.x[i] >= 0.2 * x_end || s.x.size() <= 2 || !s.line) lo = std::min(lo, s.y[i]), hi = std::max(hi, s.y[i]);
  const double pad = 0.05 * std::max(hi - lo, 1e-3);
  chart.y_min = lo - pad, chart.y_max = hi + pad;
}

bool write_both(const fs::path& dir, const std::string& name, auto write) {
  write(dir / (name + ".png"));
  write(dir / (name + ".svg"));
  return true;
}

// The periodic evaluation's batches (eval.batches of the first run), for the curve's caption.
std::string periodic_batches(const Members& members) {
  for (const auto& [name, runs] : members)
    for (const auto* r : runs)
      if (auto it = r->settings.find("eval.batches"); it != r->settings.end()) return it->second;
  return "?";
}

// The table's final validation loss of a member (the mean of its runs' full evaluations) as one marker
// at its final tokens, in the member's colour; none when a run has no full evaluation (eval.json).
void add_final_marker(LineChart& chart, const std::vector<const RunResult*>& runs, int color) {
  std::vector<double> loss, tokens;
  for (const auto* r : runs) {
    if (r->val_source != "eval.json" || !std::isfinite(r->val_loss)) return;
    loss.push_back(r->val_loss), tokens.push_back(r->tokens);
  }
  LineSeries s{"", {stat_of(tokens).mean}, {stat_of(loss).mean}, color};
  s.line = false, s.marker = 3;  // a diamond
  chart.series.push_back(std::move(s));
}

bool loss_curves(const Members& members, const fs::path& dir, bool validation) {
  const auto seeds = seeds_note(members);
  LineChart chart{validation ? "Validation loss, " + seeds : "Training loss, " + seeds, "tokens", "loss (nats/token)",
                  0, 1, {}};
  if (validation)
    chart.note = "lines: the periodic evaluation on " + periodic_batches(members) +
                 " batches; ◆ at the end: the table's value (the full split)";
  const auto curve = validation ? &RunResult::val_curve : &RunResult::train_curve;
  for (size_t i = 0; i < members.size(); ++i) {
    const auto& [name, runs] = members[i];
    auto s = mean_curve(
        name, runs, curve, [](const auto& p) { return p.first; }, [](const auto& p) { return p.second; });
    if (s.x.empty()) continue;
    s.color = s.marker = static_cast<int>(i);
    chart.series.push_back(std::move(s));
    if (validation) add_final_marker(chart, runs, static_cast<int>(i));
  }
  if (chart.series.empty()) return false;
  fit_y_range(chart);
  return write_both(dir, validation ? "val_loss" : "train_loss",
                    [&](const fs::path& f) { write_line_chart(f, chart); });
}

bool val_loss_bars(const Report& report, const Members& members, const fs::path& dir) {
  BarChart chart{"Final validation loss, " + seeds_note(members) + " (whiskers: std over seeds)",
                 "loss (nats/token)", {}, {}, false, true};
  BarSeries s{"validation loss", {}, {}};
  for (const auto& row : report.rows)
    if (std::isfinite(row.val_loss.mean))  // a member without an evaluation has no bar
      chart.categories.push_back(row.member), s.values.push_back(row.val_loss.mean),
          s.spread.push_back(row.val_loss.std);
  if (s.values.empty()) return false;
  chart.series.push_back(std::move(s));
  return write_both(dir, "val_loss_bars", [&](const fs::path& f) { write_bar_chart(f, chart); });
}

bool val_loss_differences(const Report& report, const fs::path& dir) {
  auto chart = paired_difference_chart(report);
  if (chart.categories.empty()) return false;
  return write_both(dir, "val_loss_diff", [&](const fs::path& f) { write_bar_chart(f, chart); });
}

bool bucket_bars(const Members& members, const fs::path& dir) {
  BarChart chart{"Perplexity by training-data frequency (rarest left), " + seeds_note(members) + ", log scale",
                 "perplexity", {}, {}, true, true};
  std::vector<std::string> ranges;  // the same evaluation data for every run: the first run's buckets
  for (const auto& [name, runs] : members)
    if (ranges.empty())
      for (const auto& b : runs.front()->buckets) {
        if (!std::isfinite(b.tokens)) return false;  // a summary without the buckets' sizes: no labels
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

// The sampled epsilon over training of the input embeddings (head = false) or of the untied output
// heads (head = true), one line per member in its report colour; the two live in separate figures
// because the heads' values overlap closely.
bool epsilon_curves(const Members& members, const fs::path& dir, bool head) {
  LineChart chart{fmt::format("Sampled epsilon (mu + 2 sigma) of the {}, {}",
                              head ? "untied output heads" : "input embeddings", seeds_note(members)),
                  "tokens", "epsilon", 1e300, -1e300, {}};
  for (size_t i = 0; i < members.size(); ++i) {
    const auto& [name, runs] = members[i];
    if (head && runs.front()->tied) continue;
    auto s = mean_curve(
        name, runs, &RunResult::epsilon_curve, [](const auto& p) { return p.tokens; },
        [head](const auto& p) { return head ? p.head : p.input; });
    if (s.x.empty()) continue;
    s.color = s.marker = static_cast<int>(i);
    chart.series.push_back(std::move(s));
  }
  if (chart.series.empty()) return false;
  for (const auto& s : chart.series)
    for (double y : s.y) chart.y_min = std::min(chart.y_min, y), chart.y_max = std::max(chart.y_max, y);
  const double pad = 0.05 * std::max(chart.y_max - chart.y_min, 1e-3);
  chart.y_min -= pad, chart.y_max += pad;
  return write_both(dir, head ? "epsilon_head" : "epsilon", [&](const fs::path& f) { write_line_chart(f, chart); });
}

bool cosine_histograms(const Members& members, const fs::path& dir) {
  std::vector<HistogramSeries> series;
  for (const auto& [name, runs] : members)
    if (auto h = pooled_cosine_histogram(name, runs); !h.counts.empty()) series.push_back(std::move(h));
  if (series.empty()) return false;
  return write_both(dir, "cosine_histogram", [&](const fs::path& f) { write_cosine_histogram(f, series); });
}

}  // namespace

BarChart paired_difference_chart(const Report& report) {
  BarChart chart{"", "member - " + report.baseline + " (nats/token)", {}, {}, false, true};
  BarSeries s{"mean paired difference, 95% interval", {}, {}};
  size_t lo = std::numeric_limits<size_t>::max(), hi = 0;
  for (const auto& row : report.rows) {
    const auto it = row.paired.find("val_loss");
    if (it == row.paired.end() || !std::isfinite(it->second.ci_low)) continue;
    const auto& d = it->second;
    chart.categories.push_back(row.member + (d.resolved_adjusted ? "" : d.resolved ? " (borderline)" : " (not resolved)"));
    s.values.push_back(d.mean), s.spread.push_back((d.ci_high - d.ci_low) / 2);  // the t interval is symmetric
    lo = std::min(lo, d.seeds.size()), hi = std::max(hi, d.seeds.size());
  }
  if (s.values.empty()) return chart;
  chart.title = fmt::format("Validation loss against {}, paired by seed ({} seeds)", report.baseline,
                            lo == hi ? std::to_string(hi) : fmt::format("{}-{}", lo, hi));
  chart.series.push_back(std::move(s));
  return chart;
}

HistogramSeries pooled_cosine_histogram(const std::string& member, const std::vector<const RunResult*>& runs) {
  HistogramSeries h{member, {}, 0.0, 0.0, false};
  std::vector<double> mu, eps;
  for (const auto* r : runs) {
    if (r->cosine_histogram.empty()) continue;
    if (h.counts.empty()) h.counts.assign(r->cosine_histogram.size(), 0);
    if (r->cosine_histogram.size() != h.counts.size()) continue;  // another binning: not pooled
    for (size_t b = 0; b < h.counts.size(); ++b) h.counts[b] += r->cosine_histogram[b];
    mu.push_back(r->capacity_mu), eps.push_back(r->capacity_epsilon);
  }
  if (mu.empty()) return h;
  h.mu = stat_of(mu).mean, h.epsilon = stat_of(eps).mean;
  if (mu.size() > 1) h.label += fmt::format(" ({} seeds pooled)", mu.size());
  return h;
}

std::vector<ReportFigure> write_report_figures(const Report& report, const std::vector<RunResult>& runs,
                                               const fs::path& dir) {
  const auto members = members_of(report, runs);
  std::vector<ReportFigure> written;
  if (val_loss_bars(report, members, dir)) written.push_back({"val_loss_bars", "Final validation loss per member"});
  if (val_loss_differences(report, dir))
    written.push_back({"val_loss_diff", "Validation loss against the baseline, paired by seed"});
  if (loss_curves(members, dir, true)) written.push_back({"val_loss", "Validation loss against tokens"});
  if (loss_curves(members, dir, false)) written.push_back({"train_loss", "Training loss against tokens"});
  if (bucket_bars(members, dir)) written.push_back({"bucket_ppl", "Perplexity per frequency bucket"});
  if (epsilon_curves(members, dir, false)) written.push_back({"epsilon", "Input embedding epsilon during training"});
  if (epsilon_curves(members, dir, true)) written.push_back({"epsilon_head", "Output head epsilon during training"});
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
