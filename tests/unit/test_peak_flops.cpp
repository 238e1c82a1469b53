// The matmul-peak probe (MFU's denominator) keeps to its time budget whatever the dtype's speed.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>

#include "ember/train/peak_flops.h"

namespace test_peak_flops {

double seconds_of(at::ScalarType dtype, double budget_s, double* peak) {
  const auto t0 = std::chrono::steady_clock::now();
  *peak = ember::measure_matmul_peak(at::kCPU, dtype, budget_s);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// bf16 on a CPU without bf16 units runs at ~1 GFLOP/s: fixed 1024^3 rounds took ~60 s here.
TEST(PeakFlops, ASlowDtypeStaysNearTheBudget) {
  double peak = 0;
  const double s = seconds_of(at::kBFloat16, 0.2, &peak);
  EXPECT_LT(s, 10.0);
  EXPECT_TRUE(std::isfinite(peak) && peak > 0) << peak;
}

TEST(PeakFlops, RoundsContinueUntilTheBudgetIsSpent) {
  double peak = 0;
  EXPECT_GE(seconds_of(at::kFloat, 1.0, &peak), 1.0);
  EXPECT_TRUE(std::isfinite(peak) && peak > 1e8) << peak;  // any CPU of this decade: > 0.1 GFLOP/s
}

}  // namespace test_peak_flops
