// report.csv (docs/experiments.md, "report.csv"): per member, one row per run (row = seed) and then
// the member's row (row = summary), with the paired differences against the baseline.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "ember/experiment/run_report.h"

namespace ember {
namespace {

std::string csv_quoted(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

// A CSV number, exact (the shortest text that reads back as the same double) so that the
// statistics can be recomputed from the file; an empty cell when missing (NaN) or not applicable.
std::string csv_number(double v, bool applicable = true) {
  return applicable && std::isfinite(v) ? fmt::format("{}", v) : std::string();
}

// A metric's column with a suffix: "val_loss_ci_low", "hs acc ci_low" (as "hs acc std").
std::string metric_column(const std::string& metric, const std::string& suffix) {
  return metric + (metric.find(' ') == std::string::npos ? "_" : " ") + suffix;
}

// resolved: the interval excludes 0; p: the paired t test; p_adjusted: after the report's correction
// (the `correction` column); verdict: resolved, borderline or not resolved (paired_stats.h).
constexpr const char* kPairedSuffixes[] = {"diff",     "mean_diff", "sd_diff",    "ci_low", "ci_high",
                                           "sign_agree", "resolved", "p", "p_adjusted", "verdict"};

// Metrics whose values have no column of the summary table: the frequency buckets.
bool has_own_value_column(const std::string& metric, const Report& report) {
  return metric == "val_loss" || metric == "val_ppl" || metric == "train_loss" ||
         std::find(report.tasks.begin(), report.tasks.end(), metric) != report.tasks.end();
}

std::string csv_header(const Report& report) {
  std::ostringstream csv;
  csv << "member";
  for (const auto& key : report.varied) csv << "," << csv_quoted(key);
  csv << ",seeds,params,tokens,train_loss,train_loss_std,val_loss,val_loss_std,val_ppl,val_ppl_std,"
         "val_ppl_change_pct,rare_ppl,rare_ppl_std,rare_ppl_change_pct,frequent_ppl,tokens_per_s";
  for (const auto& task : report.tasks) csv << "," << csv_quoted(task) << "," << csv_quoted(task + " std");
  csv << ",val_tokens,runs,row,seed,n_common_seeds,common_seeds,correction";
  for (const auto& m : report.metrics) {
    if (!has_own_value_column(m, report)) csv << "," << csv_quoted(m);
    for (const char* suffix : kPairedSuffixes) csv << "," << csv_quoted(metric_column(m, suffix));
  }
  return csv.str() + "\n";
}

// The columns of the summary table, for a member's row or one run's.
std::string table_cells(const Report& report, const ReportRow& r, bool summary) {
  std::ostringstream csv;
  csv << csv_quoted(r.member);
  for (const auto& key : report.varied) csv << "," << csv_quoted(r.settings.at(key));
  std::vector<std::string> dirs;
  for (const auto& d : r.runs) dirs.push_back(d.string());
  const bool spread = r.runs.size() > 1;  // a standard deviation needs two seeds
  csv << fmt::format(",{},{:.0f},{:.0f},{},{},{},{},{},{},{},{},{},{},{},{:.6g}", r.runs.size(), r.params.mean,
                     r.tokens.mean, csv_number(r.train_loss.mean), csv_number(r.train_loss.std, spread),
                     csv_number(r.val_loss.mean), csv_number(r.val_loss.std, spread), csv_number(r.val_ppl.mean),
                     csv_number(r.val_ppl.std, spread), csv_number(r.val_ppl_change, summary),
                     csv_number(r.rare_ppl.mean, r.has_buckets), csv_number(r.rare_ppl.std, r.has_buckets && spread),
                     csv_number(r.rare_ppl_change, r.has_buckets && summary),
                     csv_number(r.frequent_ppl.mean, r.has_buckets), r.tokens_per_s.mean);
  for (const auto& task : report.tasks)
    csv << "," << csv_number(r.tasks.at(task).mean) << "," << csv_number(r.tasks.at(task).std);
  csv << "," << (std::isfinite(r.val_tokens.mean) ? fmt::format("{:.0f}", r.val_tokens.mean) : "") << ","
      << csv_quoted(fmt::format("{}", fmt::join(dirs, ";")));
  return csv.str();
}

std::string seed_row_csv(const Report& report, const ReportRow& r) {
  std::ostringstream csv;
  csv << table_cells(report, r, false) << ",seed," << r.seed << ",,,";
  for (const auto& m : report.metrics) {
    const auto v = r.values.find(m);
    if (!has_own_value_column(m, report)) csv << "," << (v != r.values.end() ? csv_number(v->second.mean) : "");
    csv << "," << (r.diffs.count(m) ? csv_number(r.diffs.at(m)) : "") << ",,,,,,,,,";
  }
  return csv.str() + "\n";
}

std::string summary_row_csv(const Report& report, const ReportRow& r) {
  const bool compared = r.member != report.baseline;
  std::ostringstream csv;
  csv << table_cells(report, r, true) << ",summary,,"
      << (compared ? fmt::format("{},{},{}", r.common_seeds.size(), fmt::join(r.common_seeds, ";"),
                                 enum_name(report.correction))
                   : ",,");
  for (const auto& m : report.metrics) {
    const auto v = r.values.find(m);
    if (!has_own_value_column(m, report)) csv << "," << (v != r.values.end() ? csv_number(v->second.mean) : "");
    const auto p = r.paired.find(m);
    if (p == r.paired.end()) {
      csv << ",,,,,,,,,,";
      continue;
    }
    const auto& d = p->second;
    csv << fmt::format(",,{},{},{},{},{},{},{},{},{}", csv_number(d.mean), csv_number(d.sd), csv_number(d.ci_low),
                       csv_number(d.ci_high), d.sign_agree, d.resolved ? "yes" : "no", csv_number(d.p),
                       csv_number(d.p_adjusted), paired_verdict(d));
  }
  return csv.str() + "\n";
}

}  // namespace

std::string report_csv(const Report& report) {
  std::string csv = csv_header(report);
  for (const auto& r : report.rows) {
    for (const auto& s : r.seed_rows) csv += seed_row_csv(report, s);
    csv += summary_row_csv(report, r);
  }
  return csv;
}

}  // namespace ember
