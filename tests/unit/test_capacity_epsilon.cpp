// The epsilon estimator on matrices with known answers, the blockwise pass against a naive
// all-pairs computation, the Gram identity, the sampled interval, and bad matrices.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "ember/analysis/cosine_stats.h"
#include "ember/analysis/epsilon.h"
#include "ember/analysis/gram_blocks.h"
#include "ember/util/error.h"

using namespace ember;

namespace {

EpsilonEstimate exact(const torch::Tensor& m, int64_t block = 4096) {
  EpsilonOptions o;
  o.block = block;
  return estimate_epsilon(unit_rows(m, "test"), o);
}

// Naive reference: every pair i < j of the full Gram matrix in float64.
std::pair<double, double> naive_mu_sigma(const torch::Tensor& m) {
  auto x = m.to(torch::kDouble);
  x = x / x.norm(2, 1, true);
  const auto g = x.mm(x.t());
  const auto iu = torch::triu_indices(m.size(0), m.size(0), 1);
  const auto c = g.index({iu[0], iu[1]});
  return {c.mean().item<double>(), c.std().item<double>()};  // unbiased, as the reference
}

}  // namespace

TEST(CapacityEpsilon, OrthonormalRowsHaveZeroCosines) {
  torch::manual_seed(0);
  auto q = std::get<0>(torch::linalg_qr(torch::randn({64, 64})));
  auto e = exact(q.t().narrow(0, 0, 40));  // 40 orthonormal rows in 64 dimensions
  EXPECT_EQ(e.rows, 40);
  EXPECT_EQ(e.dim, 64);
  EXPECT_EQ(e.pairs, 40 * 39 / 2);
  EXPECT_NEAR(e.mu, 0.0, 1e-6);
  EXPECT_NEAR(e.sigma, 0.0, 1e-6);
  EXPECT_NEAR(e.max_cosine, 0.0, 1e-5);
}

TEST(CapacityEpsilon, EquiangularRowsHaveMeanCAndNoSpread) {
  torch::manual_seed(1);
  const double c = 0.3;
  // Rows e_0 * sqrt(c) + e_{i+1} * sqrt(1 - c) in d = V + 1 dimensions, then a random rotation.
  const int64_t V = 50;
  auto m = torch::zeros({V, V + 1}, torch::kDouble);
  m.index_put_({torch::indexing::Slice(), 0}, std::sqrt(c));
  for (int64_t i = 0; i < V; ++i) m.index_put_({i, i + 1}, std::sqrt(1 - c));
  auto rot = std::get<0>(torch::linalg_qr(torch::randn({V + 1, V + 1}, torch::kDouble)));
  auto e = exact((m.mm(rot) * 3.0).to(torch::kFloat), 16);  // scale must not matter; 4 x 4 blocks
  EXPECT_NEAR(e.mu, c, 1e-6);
  EXPECT_NEAR(e.sigma, 0.0, 1e-5);
  EXPECT_NEAR(e.epsilon(), c, 2e-5);
  EXPECT_NEAR(e.min_cosine, c, 1e-5);
  EXPECT_NEAR(e.max_cosine, c, 1e-5);
}

TEST(CapacityEpsilon, GaussianRowsAreNearOrthogonal) {
  torch::manual_seed(2);
  const int64_t d = 256;
  auto e = exact(torch::randn({2000, d}));
  EXPECT_NEAR(e.mu, 0.0, 3e-3);
  EXPECT_NEAR(e.sigma, 1.0 / std::sqrt(double(d)), 2e-3);
  EXPECT_NEAR(e.epsilon_3sigma() - e.epsilon(), e.sigma, 1e-12);
}

TEST(CapacityEpsilon, BlockwiseEqualsNaiveAllPairs) {
  torch::manual_seed(3);
  auto m = torch::randn({157, 24}) + 0.4;  // non-zero mean: exercises the shifted sums
  const auto [mu, sigma] = naive_mu_sigma(m);
  for (int64_t block : {7, 50, 157, 4096}) {
    auto e = exact(m, block);
    EXPECT_EQ(e.pairs, 157 * 156 / 2) << block;
    EXPECT_NEAR(e.mu, mu, 1e-6) << block;
    EXPECT_NEAR(e.sigma, sigma, 1e-6) << block;
    int64_t in_histogram = 0;
    for (auto n : e.histogram) in_histogram += n;
    EXPECT_EQ(in_histogram, e.pairs) << block;
  }
}

TEST(CapacityEpsilon, GramIdentityEqualsPairwisePass) {
  torch::manual_seed(4);
  auto m = torch::randn({300, 40}) + 0.2;
  const auto [mu, sigma] = naive_mu_sigma(m);
  EpsilonOptions o;
  o.method = EpsilonMethod::moments;
  o.block = 64;
  auto e = estimate_epsilon(unit_rows(m, "test"), o);
  EXPECT_NEAR(e.mu, mu, 1e-7);
  EXPECT_NEAR(e.sigma, sigma, 1e-7);
  EXPECT_TRUE(e.histogram.empty());
  EXPECT_TRUE(std::isnan(e.max_cosine));
}

TEST(CapacityEpsilon, AtenPathMatchesFusedCpuLoop) {
  torch::manual_seed(5);
  auto rows = unit_rows(torch::randn({90, 16}), "test").rows;
  CosineStats fused(0.01), aten(0.01);
  for_each_gram_block(rows, 32, [&](const GramBlock& b) {
    accumulate_gram_block(b, fused);
    accumulate_gram_block_aten(b, aten);
  });
  EXPECT_EQ(fused.count, aten.count);
  EXPECT_NEAR(fused.sum, aten.sum, 1e-9);
  EXPECT_NEAR(fused.sum_sq, aten.sum_sq, 1e-9);
  EXPECT_DOUBLE_EQ(fused.min, aten.min);
  EXPECT_DOUBLE_EQ(fused.max, aten.max);
  EXPECT_EQ(fused.histogram, aten.histogram);
}

TEST(CapacityEpsilon, SampledIntervalBracketsExactValue) {
  torch::manual_seed(6);
  auto u = unit_rows(torch::randn({1500, 48}) + 0.1, "test");
  const double truth = estimate_epsilon(u, {}).epsilon();
  EpsilonOptions o;
  o.method = EpsilonMethod::sampled;
  o.sample_pairs = 20000;
  int covered = 0;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    o.seed = seed;
    auto e = estimate_epsilon(u, o);
    EXPECT_EQ(e.pairs, 20000);
    EXPECT_LT(e.ci_low, e.epsilon());
    EXPECT_GT(e.ci_high, e.epsilon());
    EXPECT_LT(e.ci_high - e.ci_low, 0.02);
    covered += e.ci_low <= truth && truth <= e.ci_high;
  }
  EXPECT_GE(covered, 16);  // a 95% interval: 19 of 20 expected
  o.seed = 0;
  EXPECT_EQ(estimate_epsilon(u, o).mu, estimate_epsilon(u, o).mu);  // same seed, same sample
}

TEST(CapacityEpsilon, ZeroRowsAreDropped) {
  torch::manual_seed(7);
  auto m = torch::randn({30, 8});
  m.index_put_({3}, 0.0);
  m.index_put_({17}, 0.0);
  auto u = unit_rows(m, "test");
  EXPECT_EQ(u.input_rows, 30);
  EXPECT_EQ(u.dropped_zero_rows, 2);
  EXPECT_EQ(u.rows.size(0), 28);
  auto keep = torch::cat({m.narrow(0, 0, 3), m.narrow(0, 4, 13), m.narrow(0, 18, 12)});
  const auto [mu, sigma] = naive_mu_sigma(keep);
  auto e = estimate_epsilon(u, {});
  EXPECT_EQ(e.dropped_zero_rows, 2);
  EXPECT_NEAR(e.mu, mu, 1e-6);
  EXPECT_NEAR(e.sigma, sigma, 1e-6);
}

// Cosines do not depend on a row's scale: rows at 1e20 in fp32 (whose fp32 norm would overflow),
// and at 1e39 or 1e-46 in fp64 (out of fp32's range), give the unscaled matrix's epsilon; no row
// is taken for zero or for infinite.
TEST(CapacityEpsilon, RowScaleDoesNotMatterEvenBeyondFp32) {
  torch::manual_seed(8);
  const auto m = torch::randn({50, 12}, torch::kDouble);
  const auto [mu, sigma] = naive_mu_sigma(m);
  auto check = [&](const torch::Tensor& scaled, const char* what) {
    const auto e = exact(scaled);
    EXPECT_EQ(e.dropped_zero_rows, 0) << what;
    EXPECT_NEAR(e.mu, mu, 1e-6) << what;
    EXPECT_NEAR(e.sigma, sigma, 1e-6) << what;
  };
  auto big32 = m.to(torch::kFloat);
  big32[3].mul_(1e20);
  check(big32, "fp32 row x 1e20");
  auto big64 = m.clone();
  big64[3].mul_(1e39);
  check(big64, "fp64 row x 1e39");
  auto tiny64 = m.clone();
  tiny64[3].mul_(1e-46);
  check(tiny64, "fp64 row x 1e-46");
}

TEST(CapacityEpsilon, BadMatricesAreRefusedByName) {
  auto expect_data_error = [](const torch::Tensor& m, const std::string& want) {
    try {
      unit_rows(m, "emb.safetensors [w]");
      FAIL() << "accepted: " << want;
    } catch (const DataError& e) {
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("emb.safetensors [w]"), std::string::npos) << e.what();
    }
  };
  expect_data_error(torch::randn({10}), "expected a 2-D");
  expect_data_error(torch::randn({2, 3, 4}), "expected a 2-D");
  auto nan = torch::randn({6, 4});
  nan.index_put_({4, 1}, NAN);
  expect_data_error(nan, "first: row 4");
  expect_data_error(torch::arange(12).reshape({3, 4}), "floating-point");
  expect_data_error(torch::zeros({5, 4}), "at least 2 non-zero rows");
}
