// The fused CPU spline kernels on the shapes that reach every code path: full 64-lane passes,
// single vectors and the scalar tail of the rank; token and dimension counts that are not
// multiples of the blocks; u at the ends of [0, 1]; products that leave the float range.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>

#include "kernels/lev_spline.h"

namespace {

std::pair<at::Tensor, at::Tensor> inputs(int64_t N, int64_t H, int64_t DS, int64_t K, int64_t R, at::ScalarType t) {
  torch::manual_seed(21);
  auto u = torch::rand({N, H, DS}, torch::kDouble);
  u.index_put_({0, 0, 0}, 0.0);  // the clamped windows at both ends of the grid
  u.index_put_({0, 0, 1}, 1.0);
  auto S = 1.0 + 0.3 * torch::randn({H, DS, K, R}, torch::kDouble);
  return {u.to(t), S.to(t)};
}

double max_relative(const at::Tensor& a, const at::Tensor& b) {
  return ((a - b).abs() / (b.abs() + 1e-300)).max().item<double>();
}

}  // namespace

TEST(LevKernels, ForwardAndGradientsMatchTheReferenceForEveryRankPath) {
  // R = 1, 5: scalar only; 16 (8 doubles x 2): single vectors; 37: vectors + tail; 64, 80: full
  // passes (+ a vector). N = 70 spans two backward token blocks; d_s = 21 two dimension tasks.
  for (int64_t R : {1, 5, 16, 37, 64, 80}) {
    for (bool normalize : {true, false}) {
      auto [u0, S0] = inputs(70, 2, 21, 6, R, torch::kDouble);
      auto gM = torch::randn({70, 2, R}, torch::kDouble);
      auto u1 = u0.clone().requires_grad_(), S1 = S0.clone().requires_grad_();
      auto fused = ember::lev::spline_product(u1, S1, normalize);
      (fused * gM).sum().backward();
      auto u2 = u0.clone().requires_grad_(), S2 = S0.clone().requires_grad_();
      auto ref = ember::lev::spline_product_reference(u2, S2, normalize);
      (ref * gM).sum().backward();
      EXPECT_LT(max_relative(fused, ref), 1e-10) << "R=" << R << " normalize=" << normalize;
      const double gu_scale = u2.grad().abs().max().item<double>(), gs_scale = S2.grad().abs().max().item<double>();
      EXPECT_LT((u1.grad() - u2.grad()).abs().max().item<double>(), 1e-9 * gu_scale) << "R=" << R;
      EXPECT_LT((S1.grad() - S2.grad()).abs().max().item<double>(), 1e-9 * gs_scale) << "R=" << R;
    }
  }
}

TEST(LevKernels, Fp32ProductIsAccurateForWideFactorsAndTheDefaultSeedWidth) {
  // |phi| spread over e^{+-2}: the 128-factor products span many decades; compared with the
  // float64 reference of the same (float-rounded) inputs. The sign of S is shared by the knots of
  // a (dimension, rank) so that phi has no cancellation, which no float kernel could survive.
  torch::manual_seed(22);
  auto u = torch::rand({40, 2, 128}).to(torch::kDouble);
  auto sign = torch::where(torch::rand({2, 128, 1, 64}) < 0.2, -1.0, 1.0);
  auto S = (torch::exp(torch::randn({2, 128, 16, 64})) * sign).to(torch::kFloat).to(torch::kDouble);
  auto ref = ember::lev::spline_product_reference(u, S, true);
  auto fused = ember::lev::spline_product(u.to(torch::kFloat), S.to(torch::kFloat), true).to(torch::kDouble);
  auto finite = torch::isfinite(ref) & (ref.abs() > 1e-30) & (ref.abs() < 1e30);
  ASSERT_GT(finite.sum().item<int64_t>(), 1000);
  EXPECT_LT(max_relative(fused.masked_select(finite), ref.masked_select(finite)), 2e-5);
  EXPECT_TRUE(torch::equal(torch::sign(fused), torch::sign(ref)));
}

TEST(LevKernels, Fp32ProductUnderflowsAndOverflowsLikeTheExactProduct) {
  // Constant S = c gives phi = c (the basis is a partition of unity): M = (c + 1e-9)^128.
  auto u = torch::rand({3, 1, 128});
  auto M_of = [&](float c) { return ember::lev::spline_product(u, torch::full({1, 128, 8, 16}, c), true); };
  EXPECT_TRUE(torch::all(M_of(1e-3f) == 0).item<bool>());                                       // 1e-384
  EXPECT_TRUE(torch::all(M_of(-3.0f) == std::numeric_limits<float>::infinity()).item<bool>());  // 3^128, even count
  auto subnormal = M_of(0.5f);  // 2^-128: subnormal in float, exact through the split exponent
  EXPECT_LT((subnormal.to(torch::kDouble) / std::ldexp(1.0, -128) - 1).abs().max().item<double>(), 1e-5);
}

TEST(LevKernels, Fp32ForwardAndGradientsMatchTheFloat64Reference) {
  // The float lanes: 16 per vector, 64 per pass. R = 16 single vectors, 80 a pass + a vector,
  // 87 adds a 7-lane tail; random S, inputs rounded to float first.
  for (int64_t R : {16, 80, 87}) {
    auto [u64, S64] = inputs(70, 2, 21, 6, R, torch::kDouble);
    u64 = u64.to(torch::kFloat).to(torch::kDouble), S64 = S64.to(torch::kFloat).to(torch::kDouble);
    auto gM = torch::randn({70, 2, R}, torch::kDouble);
    auto u1 = u64.to(torch::kFloat).requires_grad_(), S1 = S64.to(torch::kFloat).requires_grad_();
    auto fused = ember::lev::spline_product(u1, S1, true);
    (fused * gM.to(torch::kFloat)).sum().backward();
    auto u2 = u64.clone().requires_grad_(), S2 = S64.clone().requires_grad_();
    auto ref = ember::lev::spline_product_reference(u2, S2, true);
    (ref * gM).sum().backward();
    EXPECT_LT(max_relative(fused.to(torch::kDouble), ref), 2e-5) << "R=" << R;
    auto close = [](const at::Tensor& a, const at::Tensor& b) {
      return (a.to(torch::kDouble) - b).abs().max().item<double>() / b.abs().max().item<double>();
    };
    EXPECT_LT(close(u1.grad(), u2.grad()), 1e-4) << "R=" << R;
    EXPECT_LT(close(S1.grad(), S2.grad()), 1e-4) << "R=" << R;
  }
}

TEST(LevKernels, NanAndOverflowPropagateLikeTheExactProduct) {
  auto [u, S] = inputs(9, 2, 12, 6, 37, torch::kFloat);  // 37 = two vectors + a 5-lane tail
  auto clean = ember::lev::spline_product(u, S, true);
  auto bad = S.clone();
  bad.index_put_({0, 3, torch::indexing::Slice(), 5}, NAN);   // a vector lane
  bad.index_put_({1, 7, torch::indexing::Slice(), 35}, NAN);  // a tail lane
  auto M = ember::lev::spline_product(u, bad, true);
  EXPECT_TRUE(torch::isnan(M.index({torch::indexing::Slice(), 0, 5})).all().item<bool>());
  EXPECT_TRUE(torch::isnan(M.index({torch::indexing::Slice(), 1, 35})).all().item<bool>());
  auto mask = torch::ones_like(M, torch::kBool);
  mask.index_put_({torch::indexing::Slice(), 0, 5}, false);
  mask.index_put_({torch::indexing::Slice(), 1, 35}, false);
  EXPECT_TRUE(torch::equal(M.masked_select(mask), clean.masked_select(mask)));
  auto u_nan = u.clone();
  u_nan.index_put_({2, 1, 4}, NAN);  // a NaN seed: the whole (token, head) row is NaN
  EXPECT_TRUE(torch::isnan(ember::lev::spline_product(u_nan, S, true)[2][1]).all().item<bool>());
  // 4 factors of 1e12 overflow float inside one exponent window; 4 of 1e-3 bring M back to
  // 1e36 * (1 + 1e-6)^4, which float holds.
  auto big = torch::ones({1, 8, 6, 64});
  big.index_put_({0, torch::indexing::Slice(0, 4)}, 1e12f);
  big.index_put_({0, torch::indexing::Slice(4, 8)}, 1e-3f);
  const double want = std::pow(double(1e12f), 4) * std::pow(double(1e-3f) + 1e-9, 4);
  auto M_big = ember::lev::spline_product(torch::rand({3, 1, 8}), big, true).to(torch::kDouble);
  EXPECT_LT((M_big / want - 1).abs().max().item<double>(), 1e-5);
}

TEST(LevKernels, NegativeZeroCountsAsPositive) {
  auto S = torch::ones({1, 8, 6, 64});
  S.index_put_({0, 0}, -0.0f);  // phi = -0 on dimension 0: M = +(0 + 1e-9) * 1^7
  auto M = ember::lev::spline_product(torch::rand({4, 1, 8}), S, true);
  EXPECT_TRUE((M > 0).all().item<bool>());
  EXPECT_NEAR(M.max().item<double>() / 1e-9, 1.0, 1e-5);
}

// phi_d exactly 0 (all knots of a lane zero): autograd of |phi| gives sign(0) = 0, so nothing flows
// into that dimension's knots or u; the fused backward must agree (it gave (dL/dM) M / 1e-9).
TEST(LevKernels, ZeroFactorGetsNoGradientAsAutogradGivesIt) {
  for (auto dtype : {torch::kDouble, torch::kFloat}) {
    auto [u0, S0] = inputs(9, 2, 12, 6, 37, dtype);            // 37 = vectors + a 5-lane tail
    S0.index_put_({0, 3, torch::indexing::Slice(), 5}, 0.0);   // a vector lane
    S0.index_put_({1, 7, torch::indexing::Slice(), 35}, 0.0);  // a tail lane
    auto gM = torch::randn({9, 2, 37}, dtype);
    auto u1 = u0.clone().requires_grad_(), S1 = S0.clone().requires_grad_();
    (ember::lev::spline_product(u1, S1, true) * gM).sum().backward();
    auto u2 = u0.clone().requires_grad_(), S2 = S0.clone().requires_grad_();
    (ember::lev::spline_product_reference(u2, S2, true) * gM).sum().backward();
    EXPECT_EQ(S1.grad().index({0, 3, torch::indexing::Slice(), 5}).abs().max().item<double>(), 0.0);
    EXPECT_EQ(S1.grad().index({1, 7, torch::indexing::Slice(), 35}).abs().max().item<double>(), 0.0);
    const double tol = dtype == torch::kDouble ? 1e-9 : 1e-4;
    EXPECT_LT((u1.grad() - u2.grad()).abs().max().item<double>(), tol * u2.grad().abs().max().item<double>());
    EXPECT_LT((S1.grad() - S2.grad()).abs().max().item<double>(), tol * S2.grad().abs().max().item<double>());
  }
}
