// A GoogleTest binary for cli.unit_batches, which checks how ctest's unit-test batches
// (cmake/EmberUnitBatches.cmake) report a pass, a skip, a failure and a crash. The failure and the
// crash happen only when the test asks for them through the environment.
#include <gtest/gtest.h>

#include <cstdlib>

TEST(Selftest, Passes) { EXPECT_EQ(1 + 1, 2); }

TEST(Selftest, Skips) { GTEST_SKIP() << "skipped on purpose"; }

TEST(Selftest, FailsWhenAsked) {
  EXPECT_EQ(std::getenv("EMBER_SELFTEST_FAIL"), nullptr) << "failed on purpose";
}

TEST(Selftest, CrashesWhenAsked) {
  if (std::getenv("EMBER_SELFTEST_CRASH")) std::abort();
}

TEST(Selftest, RunsAfterTheCrash) { SUCCEED(); }
