// The residual stream and its pending addition (model/residual_stream.h): normed() against the
// formula in fp64, with and without a pending addition, fused and on ATen's ops, values and
// gradients; the norm's output type (the one asked for where a pending addition is made, else the
// stream's); add() and sum().
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "ember/model/residual_stream.h"
#include "test_helpers.h"

namespace residual_stream_test {
namespace {

using ember::ResidualStream;

struct NormPath : ember::testing::ScopedFusion {  // the fused norm on or off for one scope
  explicit NormPath(bool fused) : ScopedFusion(ember::kernels::Op::norm, fused) {}
};

double relative(const at::Tensor& got, const at::Tensor& want) {
  return ember::testing::max_abs_diff(got.to(at::kDouble), want.to(at::kDouble)) /
         std::max(1e-300, want.abs().max().item<double>());
}

std::string path_name(bool fused, bool pending) {
  return std::string(fused ? "fused" : "ATen") + (pending ? ", an addition pending" : ", nothing pending");
}

TEST(ResidualStream, NormedEqualsTheFormulaInFloat64WithOrWithoutAPendingAddition) {
  torch::manual_seed(11);
  const int64_t D = 37;  // not a multiple of the vector lanes
  const double eps = 1e-5;
  const auto x0 = 2 * torch::randn({2, 50, D}, torch::kDouble), m0 = torch::randn({2, 50, D}, torch::kDouble);
  const auto g0 = torch::rand({D}, torch::kDouble) + 0.5;
  const auto py = torch::randn({2, 50, D}, torch::kDouble), ph = torch::randn({2, 50, D}, torch::kDouble);
  for (const bool fused : {true, false})
    for (const bool pending : {true, false}) {
      const NormPath path(fused);
      const std::string what = path_name(fused, pending);
      ember::RMSNorm norm(D, eps);
      norm.to(at::kDouble);
      auto g = norm.named_parameters()["weight"];
      {
        torch::NoGradGuard no_grad;
        g.copy_(g0);
      }
      auto x = x0.clone().requires_grad_(), m = m0.clone().requires_grad_();
      ResidualStream stream(x, pending ? m : at::Tensor());
      const auto y = stream.normed(norm);
      EXPECT_EQ(stream.tensors().size(), 1u) << what;  // the addition is made: nothing pending
      EXPECT_TRUE(stream.sum().is_same(stream.stream())) << what;
      // The stream goes on past the norm: its gradient reaches x (and m) beside the norm's.
      (y * py + stream.sum() * ph).sum().backward();

      auto xr = x0.clone().requires_grad_(), mr = m0.clone().requires_grad_(), gr = g0.clone().requires_grad_();
      const auto h = pending ? xr + mr : xr;
      const auto yr = h * at::rsqrt(h.pow(2).mean(-1, true) + eps) * gr;
      (yr * py + h * ph).sum().backward();
      EXPECT_LE(relative(stream.stream().detach(), h.detach()), 1e-16) << what;
      EXPECT_LE(relative(y.detach(), yr.detach()), 1e-14) << what;
      EXPECT_LE(relative(x.grad(), xr.grad()), 1e-13) << what;
      EXPECT_LE(relative(g.grad(), gr.grad()), 1e-13) << what;
      if (pending) {
        EXPECT_LE(relative(m.grad(), mr.grad()), 1e-13) << what;
      }
    }
}

// The pass that makes a pending addition writes the norm's output in the type asked for, rounded
// once from the same fp32 values; a norm with nothing pending, or asked for none, in the stream's
// type, which the stream keeps either way.
TEST(ResidualStream, TheFoldingPassWritesTheTypeAskedForAndEveryOtherTheStreams) {
  torch::manual_seed(12);
  const auto x = torch::randn({3, 8, 40}), m = torch::randn({3, 8, 40});
  for (const bool fused : {true, false})
    for (const bool pending : {true, false}) {
      const NormPath path(fused);
      const std::string what = path_name(fused, pending);
      ember::RMSNorm norm(40, 1e-6);
      ResidualStream plain(x, pending ? m : at::Tensor()), low(x, pending ? m : at::Tensor());
      const auto y = plain.normed(norm), y_low = low.normed(norm, at::kBFloat16);
      EXPECT_EQ(y.scalar_type(), at::kFloat) << what;
      EXPECT_EQ(y_low.scalar_type(), pending ? at::kBFloat16 : at::kFloat) << what;
      EXPECT_EQ(low.stream().scalar_type(), at::kFloat) << what;
      EXPECT_TRUE(torch::equal(low.stream(), plain.stream())) << what;
      EXPECT_TRUE(torch::equal(y_low, y.to(y_low.scalar_type()))) << what;
    }
  ember::RMSNorm norm(40, 1e-6);
  norm.to(at::kDouble);
  ResidualStream wide(x.to(at::kDouble), m.to(at::kDouble));
  EXPECT_EQ(wide.normed(norm).scalar_type(), at::kDouble);
}

TEST(ResidualStream, AddLeavesTheAdditionPendingAndSumMakesIt) {
  const auto x = torch::randn({2, 3}), a = torch::randn({2, 3}), b = torch::randn({2, 3});
  ResidualStream s(x);
  EXPECT_TRUE(s.sum().is_same(x));
  EXPECT_EQ(s.tensors().size(), 1u);
  s.add(a);
  EXPECT_TRUE(s.stream().is_same(x));
  EXPECT_TRUE(torch::equal(s.sum(), x + a));
  ASSERT_EQ(s.tensors().size(), 2u);
  EXPECT_TRUE(s.tensors()[1].is_same(a));
  s.add(b);  // a is added first
  EXPECT_TRUE(torch::equal(s.stream(), x + a));
  EXPECT_TRUE(torch::equal(s.sum(), (x + a) + b));
  const auto back = ResidualStream::of(s.tensors());
  EXPECT_TRUE(back.stream().is_same(s.stream()));
  EXPECT_TRUE(back.tensors()[1].is_same(b));
  EXPECT_EQ(ResidualStream::of({x}).tensors().size(), 1u);
  EXPECT_THROW(ResidualStream::of({}), c10::Error);
  EXPECT_THROW(ResidualStream::of({x, a, b}), c10::Error);
}

}  // namespace
}  // namespace residual_stream_test
