#include "ember/analysis/power_law_bootstrap.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>

#include "ember/util/error.h"

namespace ember {

std::vector<std::vector<PowerLaw>> bootstrap_power_laws(const std::vector<ScalingObservation>& observations,
                                                        const std::vector<PowerLaw>& starts,
                                                        const PowerLawBootstrapOptions& options) {
  using Cell = std::pair<size_t, int64_t>;  // (size, seed)
  std::map<Cell, std::vector<const ScalingObservation*>> by_cell;
  for (const auto& o : observations) {
    if (o.member >= starts.size()) throw UsageError("bootstrap: an observation names a member without a start");
    by_cell[{o.size, o.seed}].push_back(&o);
  }
  std::vector<const std::vector<const ScalingObservation*>*> cells;
  for (const auto& [cell, obs] : by_cell) cells.push_back(&obs);
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::vector<PowerLaw>> out(starts.size());
  std::mt19937_64 rng(options.seed);
  std::uniform_int_distribution<size_t> pick(0, cells.empty() ? 0 : cells.size() - 1);
  for (int64_t b = 0; b < options.replicates; ++b) {
    std::vector<std::vector<double>> n(starts.size()), loss(starts.size());
    std::vector<std::set<size_t>> sizes(starts.size());
    for (size_t k = 0; k < cells.size(); ++k)
      for (const auto* o : *cells[pick(rng)]) {
        n[o->member].push_back(o->n), loss[o->member].push_back(o->loss);
        sizes[o->member].insert(o->size);
      }
    for (size_t m = 0; m < starts.size(); ++m)
      out[m].push_back(sizes[m].size() < 3 ? PowerLaw{nan, nan, nan}
                                           : fit_power_law_from(n[m], loss[m], starts[m], options.fit).law);
  }
  return out;
}

Interval percentile_interval(std::vector<double> values, double confidence) {
  values.erase(std::remove_if(values.begin(), values.end(), [](double v) { return !std::isfinite(v); }), values.end());
  if (values.empty()) return {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::quiet_NaN()};
  std::sort(values.begin(), values.end());
  // the linear interpolation between order statistics (numpy's default percentile)
  auto at = [&](double q) {
    const double pos = q * static_cast<double>(values.size() - 1);
    const size_t lo = static_cast<size_t>(std::floor(pos));
    const size_t hi = std::min(lo + 1, values.size() - 1);
    return values[lo] + (pos - static_cast<double>(lo)) * (values[hi] - values[lo]);
  };
  return {at((1 - confidence) / 2), at((1 + confidence) / 2)};
}

}  // namespace ember
