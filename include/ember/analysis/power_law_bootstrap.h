// Bootstrap intervals of power-law fits (analysis/power_law_fit.h) over the cells of a ladder: a
// cell is one (size, seed), and every member's replicate refits the cells one draw picked, so the
// differences between members stay paired by size and seed (Besiroglu et al. 2024 resample points).
#pragma once
#include <cstdint>
#include <vector>

#include "ember/analysis/power_law_fit.h"

namespace ember {

struct ScalingObservation {
  size_t member = 0, size = 0;  // indices: a cell is (size, seed)
  int64_t seed = 0;
  double n = 0, loss = 0;  // the member's parameter count at that size, its final loss
};

struct PowerLawBootstrapOptions {
  int64_t replicates = 1000;
  uint64_t seed = 0;  // of the resampling
  PowerLawFitOptions fit;
};

// For each member (0 .. starts.size() - 1) its replicates' laws, each refitted from `starts` (the
// full data's fits). Each replicate draws as many cells as there are, with replacement; a member
// whose draw holds fewer than 3 of its sizes gets a law of NaNs for that replicate.
std::vector<std::vector<PowerLaw>> bootstrap_power_laws(const std::vector<ScalingObservation>& observations,
                                                        const std::vector<PowerLaw>& starts,
                                                        const PowerLawBootstrapOptions& options = {});

struct Interval {
  double low = 0, high = 0;
  bool holds(double v) const { return low <= v && v <= high; }
};
// The central `confidence` percentile interval of the finite values (NaN, NaN when none are).
Interval percentile_interval(std::vector<double> values, double confidence = 0.95);

}  // namespace ember
