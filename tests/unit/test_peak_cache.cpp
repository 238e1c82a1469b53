// The matmul peak's cache (train/peak_cache.h): measured in full and written when there is none;
// read back after; raised, never lowered, by a glance or a measurement that finds more; a file
// that does not read back is measured again and rewritten; one file per device, dtype and thread count.
#include <gtest/gtest.h>

#include <ATen/Parallel.h>
#include <nlohmann/json.hpp>

#include "ember/train/peak_cache.h"
#include "ember/util/files.h"
#include "scratch.h"

namespace test_peak_cache {

using ember::matmul_peak;
using ember::matmul_peak_file;
using ember::matmul_peak_key;

const at::Device cpu(at::kCPU);
constexpr double kQuick = 0.02;  // a full measurement's budget here: what is cached is checked, not the time

ember::MatmulPeak peak_of(bool measure_now = false) { return matmul_peak(cpu, at::kFloat, measure_now, kQuick); }

double cached_flops() {
  return nlohmann::json::parse(ember::read_text_file(matmul_peak_file(cpu, at::kFloat))).at("flops").get<double>();
}

void write_cache(double flops) {
  const auto file = matmul_peak_file(cpu, at::kFloat);
  std::filesystem::create_directories(file.parent_path());
  ember::write_file_atomic(file, nlohmann::json{{"key", matmul_peak_key(cpu, at::kFloat)}, {"flops", flops}}.dump());
}

TEST(PeakCache, AFirstRunMeasuresAndCachesALaterOneReadsIt) {
  ember::testing::ScratchCache cache("peak_cache", "first");
  const auto first = peak_of();
  EXPECT_EQ(first.source, "measured now");
  EXPECT_GT(first.flops, 1e8);  // any CPU of this decade
  EXPECT_EQ(matmul_peak_file(cpu, at::kFloat).parent_path(), cache.dir / "ember" / "peak");
  EXPECT_DOUBLE_EQ(cached_flops(), first.flops);
  write_cache(1e18);  // more than any glance finds: the cache is what a later run reports
  const auto later = peak_of();
  EXPECT_EQ(later.source, matmul_peak_file(cpu, at::kFloat).string());
  EXPECT_DOUBLE_EQ(later.flops, 1e18);
}

TEST(PeakCache, AGlanceRaisesALowCacheAndNothingLowersIt) {
  ember::testing::ScratchCache cache("peak_cache", "raise");
  write_cache(1.0);  // as if measured on a machine busy to a standstill
  const auto glance = peak_of();
  EXPECT_EQ(glance.source, "measured now");
  EXPECT_GT(glance.flops, 1e8);
  EXPECT_DOUBLE_EQ(cached_flops(), glance.flops);
  ember::raise_cached_peak(cpu, at::kFloat, glance.flops / 2);
  EXPECT_DOUBLE_EQ(cached_flops(), glance.flops);
  write_cache(1e18);
  const auto measured = peak_of(/*measure_now=*/true);  // --measure-peak
  EXPECT_EQ(measured.source, "measured now");
  EXPECT_LT(measured.flops, 1e18);
  EXPECT_DOUBLE_EQ(cached_flops(), 1e18);
}

TEST(PeakCache, AFileThatDoesNotReadBackIsMeasuredAgainAndRewritten) {
  ember::testing::ScratchCache cache("peak_cache", "corrupt");
  const auto file = matmul_peak_file(cpu, at::kFloat);
  std::filesystem::create_directories(file.parent_path());
  for (const std::string text : {"{\"key\": \"x\", \"flops\": 1e30}", "not json", "{\"key\": 1}"}) {
    ember::testing::write_text(file.parent_path(), file.filename().string(), text);
    const auto peak = peak_of();
    EXPECT_EQ(peak.source, "measured now") << text;
    EXPECT_LT(peak.flops, 1e30) << text;
    EXPECT_DOUBLE_EQ(cached_flops(), peak.flops) << text;
  }
}

TEST(PeakCache, EachDtypeAndThreadCountHasItsOwnEntry) {
  const auto fp32 = matmul_peak_key(cpu, at::kFloat);
  EXPECT_NE(fp32, matmul_peak_key(cpu, at::kBFloat16));
  EXPECT_NE(fp32.find("cpu ("), std::string::npos) << fp32;
  const int threads = at::get_num_threads();
  at::set_num_threads(threads == 1 ? 2 : 1);
  EXPECT_NE(matmul_peak_key(cpu, at::kFloat), fp32);
  EXPECT_NE(matmul_peak_file(cpu, at::kFloat), matmul_peak_file(cpu, at::kBFloat16));
  at::set_num_threads(threads);
  EXPECT_EQ(matmul_peak_key(cpu, at::kFloat), fp32);
}

}  // namespace test_peak_cache
