// The ladder's scaling-law fit (analysis/power_law_fit.h, power_law_bootstrap.h): synthetic ladders
// drawn from known laws with noise; the fit recovers E, A and alpha, and the bootstrap's 95%
// intervals cover the truth in at least 90% of 200 replicate ladders.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "ember/analysis/power_law_bootstrap.h"
#include "ember/analysis/power_law_fit.h"
#include "ember/util/error.h"

namespace {

using ember::PowerLaw;
using ember::ScalingObservation;

const PowerLaw kTruth{1.8, 54.0, 0.3};  // L = 3.5 at N = 1e5 down to 2.23 at 1e7

// `sizes` log-spaced sizes from 1e5 to 1e7, `seeds` runs each, log-normal noise of `sigma` on the loss.
std::vector<ScalingObservation> ladder(const PowerLaw& law, size_t sizes, int64_t seeds, double sigma,
                                       std::mt19937_64& rng, size_t member = 0) {
  std::normal_distribution<double> noise(0.0, sigma);
  std::vector<ScalingObservation> out;
  for (size_t s = 0; s < sizes; ++s) {
    const double n = 1e5 * std::pow(100.0, static_cast<double>(s) / static_cast<double>(sizes - 1));
    for (int64_t k = 1; k <= seeds; ++k) out.push_back({member, s, k, n, law(n) * std::exp(noise(rng))});
  }
  return out;
}

ember::PowerLawFit fit(const std::vector<ScalingObservation>& obs) {
  std::vector<double> n, loss;
  for (const auto& o : obs) n.push_back(o.n), loss.push_back(o.loss);
  return ember::fit_power_law(n, loss);
}

}  // namespace

TEST(PowerLawFit, RecoversAnExactLawFromEveryStart) {
  std::mt19937_64 rng(1);
  const auto f = fit(ladder(kTruth, 5, 1, 0.0, rng));
  EXPECT_NEAR(f.law.E, kTruth.E, 1e-4);
  EXPECT_NEAR(f.law.alpha, kTruth.alpha, 1e-4);
  EXPECT_NEAR(f.law.A / kTruth.A, 1.0, 1e-3);
  EXPECT_LT(f.objective, 1e-12);
}

TEST(PowerLawFit, FewerThanThreeSizesOrNonPositiveLossesAreUsageErrors) {
  EXPECT_THROW(ember::fit_power_law({1e5, 1e5, 1e6}, {3.0, 3.1, 2.5}), ember::UsageError);
  EXPECT_THROW(ember::fit_power_law({1e5, 1e6, 1e7}, {3.0, 0.0, 2.5}), ember::UsageError);
}

TEST(PowerLawFit, HuberIsQuadraticWithinDeltaAndLinearBeyond) {
  EXPECT_DOUBLE_EQ(ember::huber(0.5e-3, 1e-3), 0.125e-6);
  EXPECT_DOUBLE_EQ(ember::huber(-3e-3, 1e-3), 1e-3 * (3e-3 - 0.5e-3));
}

// 200 ladders of 6 sizes x 3 seeds with 1% noise on the loss; 100 bootstrap replicates each (a
// percentile interval from 100 is coarse but unbiased; the report uses 1000).
TEST(PowerLawFit, CoverageOfTheBootstrapIntervals) {
  std::mt19937_64 rng(7);
  const int replicates = 200;
  int covered_E = 0, covered_A = 0, covered_alpha = 0;
  double mean_alpha = 0;
  for (int r = 0; r < replicates; ++r) {
    const auto obs = ladder(kTruth, 6, 3, 0.01, rng);
    const auto f = fit(obs);
    mean_alpha += f.law.alpha / replicates;
    ember::PowerLawBootstrapOptions o;
    o.replicates = 100;
    o.seed = static_cast<uint64_t>(r);
    const auto laws = ember::bootstrap_power_laws(obs, {f.law}, o)[0];
    std::vector<double> E, A, alpha;
    for (const auto& l : laws) E.push_back(l.E), A.push_back(l.A), alpha.push_back(l.alpha);
    covered_E += ember::percentile_interval(E).holds(kTruth.E);
    covered_A += ember::percentile_interval(A).holds(kTruth.A);
    covered_alpha += ember::percentile_interval(alpha).holds(kTruth.alpha);
  }
  EXPECT_NEAR(mean_alpha, kTruth.alpha, 0.02);  // the noisy fits centre on the truth
  EXPECT_GE(covered_E, 0.9 * replicates);
  EXPECT_GE(covered_A, 0.9 * replicates);
  EXPECT_GE(covered_alpha, 0.9 * replicates);
}
