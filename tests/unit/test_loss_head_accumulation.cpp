// The loss head's chunk accumulation (model/linear_cross_entropy.h) against a float64 reference
// that does not use it: the whole [N, V] logits with plain ATen ops, log_softmax and the gradient's
// closed form G = (softmax(s z) - onehot(y)) s / N, dL/dh = G W, dL/dW = G^T h. Many chunks, fp32
// and bf16 autocast, fused and ATen passes (which share the accumulation, so comparing them with
// each other cannot see a fault in it). Each element's error is counted in rounding steps of that
// element (the spacing of bf16, or fp32, numbers at its magnitude), not of the largest value, so an
// error in a small entry counts as much as one in a large one. An element's magnitude is taken as
// at least the root-sum-square of its terms (sqrt(G^2 W^2) ...): the scale of the rounding errors
// of a sum whose terms cancel. Accumulating dL/dW in bf16 fails it.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>

#include "ember/model/autocast.h"
#include "ember/model/linear_cross_entropy.h"
#include "test_helpers.h"

namespace loss_head_accumulation {
namespace {

struct Reference {
  at::Tensor loss, h, w;        // float64
  at::Tensor scale_h, scale_w;  // each element's magnitude: max(|value|, root-sum-square of its terms)
};

// From the logits z [N, V] (float64) and the operands the GEMMs multiply (float64 copies).
Reference reference(const at::Tensor& z, const at::Tensor& h, const at::Tensor& w, const at::Tensor& y, double s) {
  const int64_t N = z.size(0);
  const auto log_p = at::log_softmax(s * z, 1);
  const auto loss = -log_p.gather(1, y.unsqueeze(1)).mean();
  const auto G = (log_p.exp() - at::one_hot(y, z.size(1)).to(at::kDouble)) * (s / static_cast<double>(N));
  const auto gh = G.mm(w), gw = G.t().mm(h);
  const auto rss_h = G.square().mm(w.square()).sqrt(), rss_w = G.square().t().mm(h.square()).sqrt();
  return {loss, gh, gw, at::maximum(gh.abs(), rss_h), at::maximum(gw.abs(), rss_w)};
}

// The spacing of numbers with `bits` significant bits (bf16 8, fp32 24) at each |x|: 2^(e - bits)
// for x = m 2^e, 0.5 <= |m| < 1.
at::Tensor rounding_step(const at::Tensor& x, int bits) {
  const auto [mantissa, exponent] = at::frexp(x.clamp_min(1e-300));
  return at::pow(2.0, (exponent - bits).to(at::kDouble));
}

// The largest error of `got` against `want`, in rounding steps of each element's magnitude.
double max_steps(const at::Tensor& got, const at::Tensor& want, const at::Tensor& scale, int bits) {
  return ((got.to(at::kDouble) - want).abs() / rounding_step(scale, bits)).max().item<double>();
}

struct Head {
  at::Tensor loss, h, w;
};

Head chunked_head(const at::Tensor& h0, const at::Tensor& w0, const at::Tensor& y, double s, int64_t rows, bool bf16,
                  bool fused) {
  const ember::testing::ScopedFusion path(ember::kernels::Op::loss_head, fused);
  auto h = h0.clone().requires_grad_(), w = w0.clone().requires_grad_();
  at::Tensor loss;
  {
    ember::AutocastScope amp(at::kCPU, bf16);
    loss = ember::linear_cross_entropy(h, w, y, s, rows);
  }
  loss.backward();
  return {loss.detach(), h.grad(), w.grad()};
}

// 512 rows in 64 chunks of 8. Positive hidden states and few distinct targets make each element of
// dL/dW a sum whose terms share a sign over every chunk, as the gradient of a frequent token's row
// is: a bf16 running sum then drops the later chunks' share (each below half a step of the sum).
TEST(LossHeadAccumulation, ChunksSumToTheFloat64ReferenceInRoundingStepsOfEachElement) {
  torch::manual_seed(21);
  const int64_t N = 512, D = 32, V = 256, rows = 8;
  const double s = 0.8;
  const auto h = torch::randn({N, D}).abs() + 0.5, w = 0.3 * torch::randn({V, D});
  const auto y = torch::randint(0, V / 8, {N}, torch::kLong) * 8;
  struct Case {
    bool bf16;
    int bits;         // of the precision the steps count in
    double loss_rel;  // the loss: fp32 sums of the rows' losses
    double h_steps, w_steps;
  };
  // Largest errors seen at this seed (fused / ATen): fp32 dh 20.5 / 20.6 and dW 8.1 / 6.4 fp32 steps
  // (from the fp32 logits' rounding); bf16 dh 1.5 / 1.4 and dW 1.5 / 1.3 bf16 steps (dh is rounded
  // to bf16 by its GEMM, dW is a sum of 64 bf16 products), at most 1.9 over seeds 21-26. A bf16
  // accumulator for dW: 12.9 steps.
  for (const auto& c : {Case{false, 24, 1e-6, 64, 64}, Case{true, 8, 1e-6, 4, 4}})
    for (bool fused : {true, false}) {
      const auto got = chunked_head(h, w, y, s, rows, c.bf16, fused);
      // The operands as the GEMMs see them: bf16 under autocast, whose logits are rounded to bf16.
      const auto hb = c.bf16 ? h.to(at::kBFloat16) : h, wb = c.bf16 ? w.to(at::kBFloat16) : w;
      const auto z = c.bf16 ? at::mm(hb, wb.t()).to(at::kDouble) : h.to(at::kDouble).mm(w.to(at::kDouble).t());
      const auto want = reference(z, hb.to(at::kDouble), wb.to(at::kDouble), y, s);
      const std::string what = std::string(c.bf16 ? "bf16" : "fp32") + (fused ? " fused" : " ATen");
      const double e_h = max_steps(got.h, want.h, want.scale_h, c.bits);
      const double e_w = max_steps(got.w, want.w, want.scale_w, c.bits);
      std::cout << what << ": dL/dh within " << e_h << " steps, dL/dW within " << e_w << "\n";
      EXPECT_NEAR(got.loss.item<double>(), want.loss.item<double>(), c.loss_rel * want.loss.item<double>()) << what;
      EXPECT_LE(e_h, c.h_steps) << what;
      EXPECT_LE(e_w, c.w_steps) << what;
      EXPECT_EQ(got.w.scalar_type(), at::kFloat) << what;
    }
}

}  // namespace
}  // namespace loss_head_accumulation
