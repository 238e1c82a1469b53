// The ladder's report (docs/experiments.md, "Ladders"): per member the fit of L(N) = E + A N^(-alpha)
// with bootstrap intervals over the ladder's cells (size, seed), and per member against the baseline
// the gap L_member(N) - L_baseline(N) at each size of the ladder and at a target size, where it is an
// extrapolation beyond the ladder's span. "not resolved" where the interval holds 0.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "ember/analysis/power_law_bootstrap.h"
#include "ember/experiment/ladder_plan.h"
#include "ember/experiment/paired_stats.h"

namespace ember {

// What the analysis needs, apart from where it came from (tests build it by hand).
struct LadderData {
  std::vector<std::string> members, sizes;  // names
  size_t baseline = 0;
  std::vector<double> size_n;               // the baseline's counted parameters per size: the gap's N
  std::vector<ScalingObservation> points;   // one per finished run (member, size, seed, n, final val loss)
  double target_n = 0;                      // 0: no extrapolation
  std::string target;                       // what the target is, for the report
  std::string count = "non-embedding";      // what N counts
};

// The finished runs of a planned ladder (an eval.json in the run directory); the others are named in
// `missing`.
LadderData read_ladder(const LadderSpec& spec, const LadderPlan& plan, std::vector<std::string>& missing);
// The same from a report's ladder_points.csv (ember ladder report --points) instead of the run
// directories; a row of no planned run, or with another N than the plan's, is a UsageError naming
// the file and line.
LadderData read_ladder_points(const LadderSpec& spec, const LadderPlan& plan, const std::filesystem::path& file,
                              std::vector<std::string>& missing);

struct LadderFit {
  std::string member;
  bool fitted = false;
  std::string why_not;  // when not fitted
  PowerLaw law;
  Interval E, A, alpha;
  size_t sizes = 0, runs = 0;
  int64_t replicates = 0;  // bootstrap replicates that could be fitted
  double objective = 0;    // the Huber objective at the fit
  // The fit and its 95% band on a grid of N over the ladder's span (for the figure).
  std::vector<double> grid_n, grid_loss, band_low, band_high;
};

struct LadderGap {
  std::string member, size;  // size: a ladder size's name, or "target"
  double n = 0;
  bool extrapolated = false;  // n outside the ladder's span of sizes
  double gap = 0;             // L_member(n) - L_baseline(n) from the fits
  Interval interval;          // 95% bootstrap percentile interval of the gap
  bool resolved = false;      // the interval excludes 0
  PairedDiff observed;        // at a ladder size: the measured paired difference over the common seeds
};

struct LadderReport {
  LadderData data;
  std::vector<LadderFit> fits;  // one per member
  std::vector<LadderGap> gaps;  // per member other than the baseline: each size, then the target
  std::vector<std::string> warnings;
};

struct LadderAnalysisOptions {
  int64_t bootstrap = 1000;
  uint64_t seed = 0;
  double huber_delta = 1e-3;
};

// UsageError when no member has results at 3 sizes; a member missing a size, one with fewer than 3
// sizes or with losses that rise with size is a warning (the last two are not fitted).
LadderReport analyse_ladder(const LadderData& data, const LadderAnalysisOptions& options = {});

std::string ladder_markdown(const LadderReport& report);
std::string ladder_fits_csv(const LadderReport& report);
std::string ladder_gaps_csv(const LadderReport& report);
std::string ladder_points_csv(const LadderReport& report);
// ladder.md, ladder_fits.csv, ladder_gaps.csv, ladder_points.csv and, with PLplot, ladder.png / .svg.
void write_ladder_report(const LadderReport& report, const std::filesystem::path& dir);

}  // namespace ember
