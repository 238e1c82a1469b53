#include "ember/experiment/paired_stats.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>

#include "ember/util/error.h"
#include "ember/util/student_t.h"

namespace ember {
namespace {

int sign_of(double x) { return (x > 0) - (x < 0); }

}  // namespace

PairedDiff paired_difference(const std::vector<int64_t>& seeds, const std::vector<double>& diffs, double confidence) {
  if (seeds.size() != diffs.size())
    throw UsageError(fmt::format("paired difference: {} seeds but {} differences", seeds.size(), diffs.size()));
  if (!(confidence > 0 && confidence < 1))
    throw UsageError(fmt::format("paired difference: confidence must be in (0, 1), got {}", confidence));
  PairedDiff p;
  p.seeds = seeds, p.diffs = diffs;
  const size_t n = diffs.size();
  if (n == 0) return p;
  double sum = 0;
  for (double d : diffs) sum += d;
  p.mean = sum / static_cast<double>(n);
  p.sign_agree = std::count_if(diffs.begin(), diffs.end(), [&](double d) { return sign_of(d) == sign_of(p.mean); });
  if (n < 2) return p;
  double ss = 0;
  for (double d : diffs) ss += (d - p.mean) * (d - p.mean);
  p.sd = std::sqrt(ss / static_cast<double>(n - 1));
  // mean +/- t_{(1 + c) / 2, n - 1} s / sqrt(n): the paired t interval
  const double half = student_t_quantile((1 + confidence) / 2, static_cast<double>(n - 1)) * p.sd /
                      std::sqrt(static_cast<double>(n));
  p.ci_low = p.mean - half, p.ci_high = p.mean + half;
  p.resolved = p.ci_low > 0 || p.ci_high < 0;
  if (p.sd > 0)  // p = 2 P(T > |t|), t = mean / (s / sqrt(n))
    p.p = 2 * student_t_cdf(-std::fabs(p.mean) / (p.sd / std::sqrt(static_cast<double>(n))), static_cast<double>(n - 1));
  else
    p.p = p.mean == 0 ? 1.0 : 0.0;  // every seed the same difference
  p.p_adjusted = p.p;
  p.resolved_adjusted = p.resolved;
  return p;
}

const char* paired_verdict(const PairedDiff& p) {
  if (p.resolved_adjusted) return "resolved";
  return p.resolved ? "borderline" : "not resolved";
}

std::vector<int64_t> common_seeds(std::vector<int64_t> a, std::vector<int64_t> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  std::vector<int64_t> both;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(both));
  both.erase(std::unique(both.begin(), both.end()), both.end());
  return both;
}

}  // namespace ember
