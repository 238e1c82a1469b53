// Paired differences over seeds (docs/experiments.md, "Paired differences"): seeds are paired, the
// same seed giving the same data order and initialisation in every member, so a member is compared
// with the baseline through its per-seed differences, their mean and a Student t interval.
#pragma once
#include <cstdint>
#include <limits>
#include <vector>

namespace ember {

struct PairedDiff {
  std::vector<int64_t> seeds;  // the seeds paired, ascending
  std::vector<double> diffs;   // member - baseline at each seed
  double mean = std::numeric_limits<double>::quiet_NaN();
  double sd = std::numeric_limits<double>::quiet_NaN();  // sample standard deviation (n - 1); NaN below 2 seeds
  // mean -/+ t_{(1 + confidence) / 2, n - 1} sd / sqrt(n); NaN below 2 seeds (no interval from one).
  double ci_low = std::numeric_limits<double>::quiet_NaN(), ci_high = std::numeric_limits<double>::quiet_NaN();
  int64_t sign_agree = 0;  // seeds whose difference has the sign of the mean (-1, 0 or +1)
  bool resolved = false;   // the interval excludes 0 (never with one seed)
  // The two-sided paired t test of a zero mean: P(|T| >= |mean| / (sd / sqrt(n))), T ~ t_{n - 1}
  // (p < 1 - confidence exactly when the interval excludes 0); NaN below 2 seeds.
  double p = std::numeric_limits<double>::quiet_NaN();
  // p after the report's correction across the members compared with the baseline
  // (experiment/multiple_comparisons.h); p itself until a report adjusts it.
  double p_adjusted = std::numeric_limits<double>::quiet_NaN();
  bool resolved_adjusted = false;  // p_adjusted < 1 - confidence
};

// The statistics of `diffs`, one per seed of `seeds` (same length; UsageError otherwise, or for a
// confidence outside (0, 1)). A zero spread over two or more seeds gives the point as its interval.
PairedDiff paired_difference(const std::vector<int64_t>& seeds, const std::vector<double>& diffs,
                             double confidence = 0.95);

// "resolved" (the adjusted p is below 1 - confidence), "borderline" (the interval excludes 0 but the
// adjusted p does not: resolved only as a single comparison) or "not resolved".
const char* paired_verdict(const PairedDiff& p);

// The seeds both sets hold, ascending.
std::vector<int64_t> common_seeds(std::vector<int64_t> a, std::vector<int64_t> b);

}  // namespace ember
