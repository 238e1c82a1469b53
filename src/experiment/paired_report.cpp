#include "ember/experiment/paired_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <sstream>

namespace ember {
namespace {

// The first run of each seed: the one the pairing uses (make_report warns of a second).
std::map<int64_t, const ReportRow*> run_by_seed(const ReportRow& member) {
  std::map<int64_t, const ReportRow*> by_seed;
  for (const auto& r : member.seed_rows) by_seed.emplace(r.seed, &r);
  return by_seed;
}

double value_of(const ReportRow& seed_row, const std::string& metric) {
  const auto v = seed_row.values.find(metric);
  return v != seed_row.values.end() ? v->second.mean : kMissing;
}

void pair_member(ReportRow& row, const ReportRow& base, const std::vector<std::string>& metrics) {
  const auto base_runs = run_by_seed(base);
  for (auto& seed_row : row.seed_rows) {
    const auto b = base_runs.find(seed_row.seed);
    if (b == base_runs.end()) continue;
    for (const auto& m : metrics) {
      const double d = value_of(seed_row, m) - value_of(*b->second, m);
      if (std::isfinite(d)) seed_row.diffs[m] = d;
    }
  }
  row.common_seeds = common_seeds(row.seeds, base.seeds);
  if (row.common_seeds.empty()) return;
  const auto runs = run_by_seed(row);
  for (const auto& m : metrics) {
    std::vector<double> diffs;
    for (int64_t seed : row.common_seeds) {
      const auto& d = runs.at(seed)->diffs;
      if (!d.count(m)) break;  // a run of either member lacks the metric: not paired
      diffs.push_back(d.at(m));
    }
    if (diffs.size() == row.common_seeds.size()) row.paired[m] = paired_difference(row.common_seeds, diffs);
  }
}

std::string seed_list(const std::vector<int64_t>& seeds) { return fmt::format("{}", fmt::join(seeds, ", ")); }

std::string signed_number(double v) { return fmt::format("{:+.4g}", v); }

std::string interval_text(const PairedDiff& p) {
  if (p.seeds.size() < 2) return "n/a (1 seed)";
  return fmt::format("[{}, {}]", signed_number(p.ci_low), signed_number(p.ci_high));
}

std::string per_seed_text(const PairedDiff& p) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < p.diffs.size(); ++i) parts.push_back(fmt::format("{}: {}", p.seeds[i], signed_number(p.diffs[i])));
  return fmt::format("{}", fmt::join(parts, ", "));
}

// Which seeds a member was compared on, said plainly when its seeds are not the baseline's.
std::string seeds_sentence(const ReportRow& row, const ReportRow& base) {
  if (row.common_seeds.empty())
    return fmt::format("No seed in common with `{}` ({} has {}; {} has {}): not compared.", base.member, row.member,
                       seed_list(row.seeds), base.member, seed_list(base.seeds));
  if (row.seeds == base.seeds) return fmt::format("Seeds {} (both members).", seed_list(row.common_seeds));
  return fmt::format("Compared on their common seeds {} only: {} has {}; {} has {}.", seed_list(row.common_seeds),
                     row.member, seed_list(row.seeds), base.member, seed_list(base.seeds));
}

// Each metric's p values across the members compared with the baseline, adjusted together
// (experiment/multiple_comparisons.h).
void adjust_across_members(Report& report) {
  for (const auto& m : report.metrics) {
    std::vector<PairedDiff*> tests;
    std::vector<double> p;
    for (auto& row : report.rows)
      if (const auto it = row.paired.find(m); it != row.paired.end()) {
        tests.push_back(&it->second);
        p.push_back(it->second.p);
      }
    const auto adjusted = adjust_p_values(p, report.correction);
    for (size_t i = 0; i < tests.size(); ++i) {
      tests[i]->p_adjusted = adjusted[i];
      tests[i]->resolved_adjusted = tests[i]->resolved && adjusted[i] < 0.05;  // the 95% interval's level
    }
  }
}

std::string p_text(double p) { return std::isfinite(p) ? fmt::format("{:.3g}", p) : "n/a"; }

}  // namespace

void pair_with_baseline(Report& report) {
  const auto base = std::find_if(report.rows.begin(), report.rows.end(),
                                 [&](const ReportRow& r) { return r.member == report.baseline; });
  for (auto& row : report.rows)
    if (&row != &*base) pair_member(row, *base, report.metrics);
  adjust_across_members(report);
}

std::string correction_sentence(const Report& report) {
  const size_t compared = report.rows.size() - 1;
  if (report.correction == Correction::none)
    return fmt::format("p: the paired t test of a zero mean, not corrected for the {} members compared with the "
                       "baseline (--correction none): a member is resolved when its interval excludes 0.",
                       compared);
  return fmt::format("p: the paired t test of a zero mean; p ({0}): adjusted by {1} across the {2} members compared "
                     "with the baseline, per metric (--correction {0}). A member is resolved when its adjusted p "
                     "is below 0.05; borderline when its interval excludes 0 but its adjusted p does not.",
                     enum_name(report.correction),
                     report.correction == Correction::holm ? "Holm's step-down method" : "Bonferroni", compared);
}

std::string paired_markdown(const Report& report) {
  if (report.rows.size() < 2) return "";
  const auto& base = *std::find_if(report.rows.begin(), report.rows.end(),
                                   [&](const ReportRow& r) { return r.member == report.baseline; });
  std::ostringstream md;
  md << "\n## Paired differences against `" << report.baseline << "` (95% t interval over common seeds)\n\n"
     << "Seeds are paired: a seed gives the same data order and initialisation in every member. Per seed, "
     << "member - baseline; their mean, its 95% Student t interval (n - 1 degrees of freedom) and how many "
     << "seeds agree with the mean's sign. A difference whose interval contains 0 is not resolved. "
     << correction_sentence(report) << "\n";
  for (const auto& row : report.rows) {
    if (row.member == report.baseline) continue;
    md << "\n### " << row.member << " vs " << report.baseline << "\n\n" << seeds_sentence(row, base) << "\n";
    if (row.paired.empty()) continue;
    md << fmt::format("\n| metric | per-seed differences | mean | 95% interval | p | p ({}) | sign agrees | |\n"
                      "|---|---|---|---|---|---|---|---|\n",
                      enum_name(report.correction));
    for (const auto& m : report.metrics) {
      if (!row.paired.count(m)) continue;
      const auto& p = row.paired.at(m);
      md << fmt::format("| {} | {} | {} | {} | {} | {} | {}/{} | {} |\n", m, per_seed_text(p), signed_number(p.mean),
                        interval_text(p), p_text(p.p), p_text(p.p_adjusted), p.sign_agree, p.seeds.size(),
                        paired_verdict(p));
    }
  }
  return md.str();
}

}  // namespace ember
