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
  EXPECT_TRUE(torch::all(M_of(1e-3f) == 0).item<bool>());                                   // 1e-384
  EXPECT_TRUE(torch::all(M_of(-3.0f) == std::numeric_limits<float>::infinity()).item<bool>());  // 3^128, even count
  auto subnormal = M_of(0.5f);  // 2^-128: subnormal in float, exact through the split exponent
  EXPECT_LT((subnormal.to(torch::kDouble) / std::ldexp(1.0, -128) - 1).abs().max().item<double>(), 1e-5);
}
