// ladder.md, the CSV files and the figure of a ladder report (experiment/ladder_report.h).
#include <fmt/format.h>

#include <cmath>

#include "ember/analysis/line_plot.h"
#include "ember/analysis/plot_output.h"
#include "ember/experiment/ladder_report.h"
#include "ember/experiment/report_figures.h"
#include "ember/util/files.h"

namespace ember {
namespace {

namespace fs = std::filesystem;

std::string num(double v) { return std::isfinite(v) ? fmt::format("{:.4g}", v) : "n/a"; }
std::string csv_num(double v) { return std::isfinite(v) ? fmt::format("{:.10g}", v) : ""; }
std::string interval(const Interval& i) { return fmt::format("[{}, {}]", num(i.low), num(i.high)); }
std::string signed_interval(const Interval& i) {
  return std::isfinite(i.low) ? fmt::format("[{:+.4g}, {:+.4g}]", i.low, i.high) : "n/a";
}

std::string fits_table(const LadderReport& r) {
  std::string md =
      "| member | E | 95% | A | 95% | alpha | 95% | sizes | runs |\n|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& f : r.fits) {
    if (!f.fitted) {
      md += fmt::format("| {} | not fitted: {} | | | | | | {} | {} |\n", f.member, f.why_not, f.sizes, f.runs);
      continue;
    }
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", f.member, num(f.law.E), interval(f.E),
                      num(f.law.A), interval(f.A), num(f.law.alpha), interval(f.alpha), f.sizes, f.runs);
  }
  return md;
}

std::string gaps_table(const LadderReport& r) {
  std::string md = fmt::format(
      "\n## Gap against `{}`\n\nL_member(N) - L_{}(N) from the two fits, with its 95% bootstrap interval (the same "
      "cells drawn for both members); beside it the measured paired difference over the seeds both finished "
      "(mean and 95% t interval).\n\n| member | size | N | fitted gap | 95% | | measured | 95% t |\n"
      "|---|---|---|---|---|---|---|---|\n",
      r.data.members[r.data.baseline], r.data.members[r.data.baseline]);
  for (const auto& g : r.gaps) {
    const std::string verdict = std::string(g.resolved ? "resolved" : "not resolved") +
                                (g.extrapolated ? ", **extrapolated** beyond the ladder" : "");
    const bool measured = !g.observed.seeds.empty();
    md += fmt::format("| {} | {} | {} | {:+.4g} | {} | {} | {} | {} |\n", g.member, g.size, num(g.n), g.gap,
                      signed_interval(g.interval), verdict, measured ? fmt::format("{:+.4g}", g.observed.mean) : "",
                      measured ? signed_interval({g.observed.ci_low, g.observed.ci_high}) : "");
  }
  return md;
}

std::string figure(const LadderReport& r, const fs::path& dir) {
  LineChart chart{"Final validation loss against size (log-log), 95% bootstrap bands dashed",
                  "log10 N (" + r.data.count + " parameters)", "log10 loss", 1e300, -1e300, {}};
  int color = 0;
  for (const auto& f : r.fits) {
    LineSeries pts{"", {}, {}, color};
    pts.marker = color;
    pts.line = false;
    for (const auto& p : r.data.points)
      if (r.data.members[p.member] == f.member) pts.x.push_back(std::log10(p.n)), pts.y.push_back(std::log10(p.loss));
    if (f.fitted) {
      LineSeries fit{f.member, {}, {}, color}, low{"", {}, {}, color}, high{"", {}, {}, color};
      low.dashed = high.dashed = true;
      fit.markers = low.markers = high.markers = false;
      fit.marker = color;  // the legend shows the points' marker
      for (size_t i = 0; i < f.grid_n.size(); ++i) {
        const double x = std::log10(f.grid_n[i]);
        fit.x.push_back(x), fit.y.push_back(std::log10(f.grid_loss[i]));
        if (std::isfinite(f.band_low[i])) low.x.push_back(x), low.y.push_back(std::log10(f.band_low[i]));
        if (std::isfinite(f.band_high[i])) high.x.push_back(x), high.y.push_back(std::log10(f.band_high[i]));
      }
      for (auto* s : {&fit, &low, &high})
        if (!s->x.empty()) chart.series.push_back(*s);
    } else {
      pts.label = f.member + " (not fitted)";
    }
    if (!pts.x.empty()) chart.series.push_back(pts);
    ++color;
  }
  for (const auto& s : chart.series)
    for (double y : s.y) chart.y_min = std::min(chart.y_min, y), chart.y_max = std::max(chart.y_max, y);
  const double pad = 0.05 * std::max(chart.y_max - chart.y_min, 1e-3);
  chart.y_min -= pad, chart.y_max += pad;
  write_line_chart(dir / "ladder.png", chart);
  write_line_chart(dir / "ladder.svg", chart);
  return figures_markdown({{"ladder", "Loss against size"}});
}

}  // namespace

std::string ladder_markdown(const LadderReport& r) {
  std::string md = fmt::format(
      "# Ladder report\n\nPer member L(N) = E + A N^(-alpha), N = {} parameters, fitted by a Huber loss on "
      "log-loss residuals (Hoffmann et al. 2022, approach 3; Besiroglu et al. 2024); 95% percentile intervals "
      "from a bootstrap over the ladder's cells (size, seed).\n\n",
      r.data.count);
  for (const auto& w : r.warnings) md += "> warning: " + w + "\n";
  if (!r.warnings.empty()) md += "\n";
  md += fits_table(r);
  if (!r.gaps.empty()) md += gaps_table(r);
  if (r.data.target_n > 0)
    md += fmt::format("\nTarget: {} = {} parameters.{}\n", r.data.target, num(r.data.target_n),
                      r.gaps.empty() ? "" : " A gap there is an extrapolation of the fits beyond the sizes trained: "
                                            "it assumes the law holds that far, which the ladder cannot test.");
  return md;
}

std::string ladder_fits_csv(const LadderReport& r) {
  std::string csv = "member,fitted,E,E_low,E_high,A,A_low,A_high,alpha,alpha_low,alpha_high,sizes,runs,replicates,"
                    "huber_objective,why_not\n";
  for (const auto& f : r.fits)
    csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", f.member, f.fitted ? "yes" : "no",
                       csv_num(f.fitted ? f.law.E : NAN), csv_num(f.E.low), csv_num(f.E.high),
                       csv_num(f.fitted ? f.law.A : NAN), csv_num(f.A.low), csv_num(f.A.high),
                       csv_num(f.fitted ? f.law.alpha : NAN), csv_num(f.alpha.low), csv_num(f.alpha.high), f.sizes,
                       f.runs, f.replicates, csv_num(f.objective), f.why_not);
  return csv;
}

std::string ladder_gaps_csv(const LadderReport& r) {
  std::string csv = "member,baseline,size,n,extrapolated,gap,gap_low,gap_high,resolved,measured_mean,measured_low,"
                    "measured_high,measured_seeds\n";
  for (const auto& g : r.gaps)
    csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{}\n", g.member, r.data.members[r.data.baseline], g.size,
                       csv_num(g.n), g.extrapolated ? "yes" : "no", csv_num(g.gap), csv_num(g.interval.low),
                       csv_num(g.interval.high), g.resolved ? "yes" : "no", csv_num(g.observed.mean),
                       csv_num(g.observed.ci_low), csv_num(g.observed.ci_high), g.observed.seeds.size());
  return csv;
}

// Exact (the shortest text that reads back as the same double): the points are what
// `ember ladder report --points` rebuilds the report from.
std::string ladder_points_csv(const LadderReport& r) {
  std::string csv = "member,size,seed,n,loss\n";
  for (const auto& p : r.data.points)
    csv += fmt::format("{},{},{},{},{}\n", r.data.members[p.member], r.data.sizes[p.size], p.seed, p.n, p.loss);
  return csv;
}

void write_ladder_report(const LadderReport& r, const fs::path& dir) {
  fs::create_directories(dir);
  std::string md = ladder_markdown(r);
  if (plotting_available()) md += figure(r, dir);
  write_file_atomic(dir / "ladder_fits.csv", ladder_fits_csv(r));
  write_file_atomic(dir / "ladder_gaps.csv", ladder_gaps_csv(r));
  write_file_atomic(dir / "ladder_points.csv", ladder_points_csv(r));
  write_file_atomic(dir / "ladder.md", md);
}

}  // namespace ember
