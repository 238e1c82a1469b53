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
};

// The statistics of `diffs`, one per seed of `seeds` (same length; UsageError otherwise, or for a
// confidence outside (0, 1)). A zero spread over two or more seeds gives the point as its interval.
PairedDiff paired_difference(const std::vector<int64_t>& seeds, const std::vector<double>& diffs,
                             double confidence = 0.95);

// The seeds both sets hold, ascending.
std::vector<int64_t> common_seeds(std::vector<int64_t> a, std::vector<int64_t> b);

}  // namespace ember
