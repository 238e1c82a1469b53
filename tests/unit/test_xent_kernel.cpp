// The fused softmax cross-entropy rows (kernels/xent.h) against ATen's log_softmax in float64, in
// fp64, fp32 and bf16; the loss head (model/linear_cross_entropy.h) fused against its ATen path
// (kernels.loss_head = aten) and against central differences; the trainer's folded loss scale against
// loss * scale with autograd, tied and untied, also under a gradient other than 1; non-finite
// logits and ignored targets.
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <ATen/record_function.h>
#include <torch/torch.h>

#include "central_differences.h"
#include "ember/model/autocast.h"
#include "ember/model/linear_cross_entropy.h"
#include "ember/model/lm.h"
#include "ember/run/parameters.h"
#include "ember/util/error.h"
#include "kernels/xent.h"
#include "test_helpers.h"

namespace xent_kernel {
namespace {

struct Reference {
  at::Tensor loss, grad;  // per row; d(g CE)/dz
};

// In float64 with ATen ops: CE = -log_softmax(s z)_y, gradient (softmax(s z) - onehot(y)) s g.
Reference reference(const at::Tensor& z, const at::Tensor& y, double s, double g) {
  const auto log_p = at::log_softmax(z.to(at::kDouble) * s, -1);
  const auto loss = -log_p.gather(1, y.unsqueeze(1)).squeeze(1);
  auto grad = log_p.exp() - at::one_hot(y, z.size(1)).to(at::kDouble);
  return {loss, grad * (s * g)};
}

double max_rel(const at::Tensor& a, const at::Tensor& b) {
  return ((a.to(at::kDouble) - b).abs().max() / b.abs().max().clamp_min(1e-300)).item<double>();
}

TEST(XentRows, MatchesLogSoftmaxInEachDtype) {
  torch::manual_seed(7);
  const int64_t n = 37, V = 1003;  // V not a multiple of the 16 lanes
  const auto y = torch::randint(0, V, {n}, torch::kLong);
  const auto z64 = 3.0 * torch::randn({n, V}, torch::kDouble);
  for (double s : {1.0, 0.37}) {
    const auto ref = reference(z64, y, s, 0.125);
    struct Case {
      at::ScalarType dtype;
      double loss_tol, grad_tol;
    };
    for (const auto& c : {Case{at::kDouble, 1e-12, 1e-12}, Case{at::kFloat, 2e-6, 2e-6}, Case{at::kBFloat16, 0, 0}}) {
      auto z = z64.to(c.dtype, /*non_blocking=*/false, /*copy=*/true);  // the kernel writes over it
      // bf16: the reference takes the bf16 logits themselves; the gradient is rounded to bf16 once.
      const auto want = c.dtype == at::kBFloat16 ? reference(z, y, s, 0.125) : ref;
      auto losses = ember::xent::softmax_xent_rows_(z, y, s, 0.125, true);
      EXPECT_EQ(losses.scalar_type(), c.dtype == at::kDouble ? at::kDouble : at::kFloat);
      EXPECT_EQ(z.scalar_type(), c.dtype);  // in place, in its own dtype
      const double loss_tol = c.dtype == at::kBFloat16 ? 2e-6 : c.loss_tol;
      const double grad_tol = c.dtype == at::kBFloat16 ? 1.0 / 128 : c.grad_tol;  // bf16: 8 bits of mantissa
      EXPECT_LT(max_rel(losses, want.loss), loss_tol) << c.dtype << " s " << s;
      EXPECT_LT(max_rel(z, want.grad), grad_tol) << c.dtype << " s " << s;
    }
  }
}

TEST(XentRows, LossOnlyLeavesTheLogitsAlone) {
  auto z = torch::randn({5, 64});
  const auto before = z.clone();
  const auto y = torch::randint(0, 64, {5}, torch::kLong);
  const auto losses = ember::xent::softmax_xent_rows_(z, y, 1.0, 1.0, false);
  EXPECT_TRUE(torch::equal(z, before));
  EXPECT_LT(max_rel(losses, reference(before, y, 1.0, 1.0).loss), 2e-6);
}

TEST(XentRows, RowsWithAStrideAndExtremeLogits) {
  // Rows of a wider buffer (row stride > V), a row with a huge spread, a row of equal logits.
  auto wide = torch::zeros({3, 80}, torch::kFloat);
  auto z = wide.narrow(1, 0, 50);
  z[0] = torch::linspace(-1e4, 50, 50);
  z[1] = torch::full({50}, 7.0);
  z[2] = torch::randn({50});
  const auto y = torch::tensor({49, 3, 0}, torch::kLong);
  const auto ref = reference(z.clone(), y, 1.0, 1.0);
  const auto losses = ember::xent::softmax_xent_rows_(z, y, 1.0, 1.0, true);
  EXPECT_LT((losses.to(at::kDouble) - ref.loss).abs().max().item<double>(), 1e-5);
  EXPECT_NEAR(losses[1].item<double>(), std::log(50.0), 1e-6);
  EXPECT_LT((z.to(at::kDouble) - ref.grad).abs().max().item<double>(), 1e-6);
  EXPECT_TRUE(torch::equal(wide.narrow(1, 50, 30), torch::zeros({3, 30})));  // the padding is not touched
}

// One meaning on every device (the CUDA kernel shares the math, tests/gpu/xent_kernel.cpp): a row
// holding +inf, -inf or NaN anywhere, target or not, has a NaN loss and a NaN gradient, so that
// train.on_nonfinite stops or skips the step. ATen's log_softmax would give a finite loss for a -inf
// away from the target (checked below): the loss head deliberately does not.
TEST(XentRows, AnyNonFiniteLogitGivesItsRowANaNLoss) {
  for (auto dtype : {at::kFloat, at::kBFloat16, at::kDouble})
    for (double bad : {double(INFINITY), -double(INFINITY), double(NAN)})
      for (int64_t at_col : {5, 0}) {  // 0: the target's own logit
        auto z = torch::randn({3, 40}).to(dtype);
        z[1][at_col] = bad;
        const auto losses = ember::xent::softmax_xent_rows_(z, torch::tensor({0, 0, 0}, torch::kLong), 1.0, 0.5, true);
        const std::string what =
            std::string(c10::toString(dtype)) + " " + std::to_string(bad) + " at " + std::to_string(at_col);
        EXPECT_TRUE(std::isfinite(losses[0].item<double>())) << what;
        EXPECT_TRUE(std::isnan(losses[1].item<double>())) << what;
        EXPECT_TRUE(std::isfinite(losses[2].item<double>())) << what;
        EXPECT_TRUE(z[1].isnan().all().item<bool>()) << what;  // its whole gradient
        EXPECT_TRUE(z[0].isfinite().all().item<bool>() && z[2].isfinite().all().item<bool>()) << what;
        auto no_grad = torch::randn({2, 40}).to(dtype);
        no_grad[0][at_col] = bad;
        const auto l = ember::xent::softmax_xent_rows_(no_grad, torch::tensor({0, 0}, torch::kLong), 0.7, 1.0, false);
        EXPECT_TRUE(std::isnan(l[0].item<double>()) && std::isfinite(l[1].item<double>())) << what;
      }
  auto minus_inf = torch::randn({1, 40});
  minus_inf[0][5] = -INFINITY;
  EXPECT_TRUE(std::isfinite(at::cross_entropy_loss(minus_inf, torch::tensor({0}, torch::kLong)).item<double>()));
}

// An ignored row (target == ignore_index) has loss 0 and a zero gradient, whatever its logits; the
// others are as without it, their gradient factor divided by `counted` when it is given.
TEST(XentRows, IgnoredRowsCountForNothing) {
  torch::manual_seed(12);
  for (auto dtype : {at::kDouble, at::kFloat, at::kBFloat16}) {
    const auto z0 = torch::randn({4, 33}, torch::kDouble).to(dtype);
    auto z = z0.clone();
    z[2][7] = NAN;  // ignored: never read
    const auto y = torch::tensor({3, -100, -100, 32}, torch::kLong);
    const auto kept = torch::tensor({0, 3}, torch::kLong);
    const auto losses = ember::xent::softmax_xent_rows_(z, y, 0.8, 1.0, true, -100, torch::tensor(2, torch::kLong));
    const auto want = reference(z0.index_select(0, kept), y.index_select(0, kept), 0.8, 0.5);  // g / 2 rows
    const double tol = dtype == at::kDouble ? 1e-12 : dtype == at::kFloat ? 2e-6 : 1.0 / 128;
    EXPECT_LT(max_rel(losses.index_select(0, kept), want.loss), dtype == at::kDouble ? 1e-12 : 2e-6) << dtype;
    EXPECT_LT(max_rel(z.index_select(0, kept), want.grad), tol) << dtype;
    EXPECT_EQ(losses[1].item<double>(), 0.0);
    EXPECT_EQ(losses[2].item<double>(), 0.0);
    EXPECT_TRUE(torch::equal(z.narrow(0, 1, 2), torch::zeros({2, 33}, dtype))) << dtype;
  }
  // Another ignore index, inside the vocabulary; -100 is then a target outside it.
  auto z = torch::randn({3, 10});
  const auto losses = ember::xent::softmax_xent_rows_(z, torch::tensor({4, 0, 4}, torch::kLong), 1, 1, false, 4);
  EXPECT_EQ(losses[0].item<double>(), 0.0);
  EXPECT_GT(losses[1].item<double>(), 0.0);
  EXPECT_THROW(ember::xent::softmax_xent_rows_(z, torch::tensor({4, -100, 4}, torch::kLong), 1, 1, true, 4),
               ember::Error);
  EXPECT_THROW(
      ember::xent::softmax_xent_rows_(z, torch::tensor({4, 0, 4}, torch::kLong), 1, 1, true, -100, torch::tensor(2.0)),
      ember::Error);  // the count must be an int64
}

// In place unless the scalar is exactly 1 (then the tensor is not even written: its version stays).
TEST(XentRows, ScaleUnlessOne) {
  auto x = torch::randn({5, 3});
  const auto before = x.clone();
  const auto version = x._version();
  ember::xent::scale_unless_one_(x, torch::tensor(1.0));
  EXPECT_TRUE(torch::equal(x, before));
  EXPECT_EQ(x._version(), version);
  ember::xent::scale_unless_one_(x, torch::tensor(0.5, torch::kDouble));
  EXPECT_TRUE(torch::equal(x, before * 0.5));
  auto b = before.to(at::kBFloat16);
  ember::xent::scale_unless_one_(b, torch::tensor(3.0));
  EXPECT_TRUE(torch::equal(b, before.to(at::kBFloat16) * 3.0));
}

TEST(XentRows, BadInputsAreNamedErrors) {
  auto z = torch::randn({2, 10});
  EXPECT_THROW(ember::xent::softmax_xent_rows_(z, torch::tensor({0, 10}, torch::kLong), 1, 1, true), ember::Error);
  EXPECT_THROW(ember::xent::softmax_xent_rows_(z, torch::tensor({-1, 0}, torch::kLong), 1, 1, true), ember::Error);
  EXPECT_THROW(ember::xent::softmax_xent_rows_(z, torch::tensor({0}, torch::kLong), 1, 1, true), ember::Error);
  auto half = z.to(at::kHalf);
  EXPECT_FALSE(ember::xent::fused_supported(half));
  EXPECT_THROW(ember::xent::softmax_xent_rows_(half, torch::tensor({0, 1}, torch::kLong), 1, 1, true), ember::Error);
  try {
    ember::xent::softmax_xent_rows_(z, torch::tensor({0, 12}, torch::kLong), 1, 1, true);
  } catch (const ember::Error& e) {
    EXPECT_NE(std::string(e.what()).find("target 12 of row 1 is outside the vocabulary [0, 10)"), std::string::npos)
        << e.what();
  }
}

struct Grads {
  at::Tensor loss, h, w;
};

Grads run_head(const at::Tensor& h0, const at::Tensor& w0, const at::Tensor& y, double scale, int64_t rows,
               bool fused) {
  const ember::testing::ScopedFusion head(ember::kernels::Op::loss_head, fused);
  auto h = h0.clone().requires_grad_(), w = w0.clone().requires_grad_();
  auto loss = ember::linear_cross_entropy(h, w, y, scale, rows);
  (loss * 2.5).backward();
  return {loss.detach(), h.grad(), w.grad()};
}

TEST(FusedLossHead, AgreesWithTheAtenPathInFp64Fp32AndBf16) {
  torch::manual_seed(8);
  const int64_t N = 50, D = 24, V = 301;
  const auto h = torch::randn({N, D}), w = 0.3 * torch::randn({V, D});
  const auto y = torch::randint(0, V, {N}, torch::kLong);
  for (auto dtype : {at::kDouble, at::kFloat}) {
    const double tol = dtype == at::kDouble ? 1e-12 : 2e-5;
    const auto a = run_head(h.to(dtype), w.to(dtype), y, 0.7, 13, true);
    const auto b = run_head(h.to(dtype), w.to(dtype), y, 0.7, 13, false);
    EXPECT_NEAR(a.loss.item<double>(), b.loss.item<double>(), tol) << dtype;
    EXPECT_LT(max_rel(a.h, b.h.to(at::kDouble)), tol) << dtype;
    EXPECT_LT(max_rel(a.w, b.w.to(at::kDouble)), tol) << dtype;
  }
  ember::AutocastScope bf16(at::kCPU, true);  // bf16 logits: the fused pass rounds its gradient to bf16 once
  const auto a = run_head(h, w, y, 1.0, 13, true), b = run_head(h, w, y, 1.0, 13, false);
  EXPECT_NEAR(a.loss.item<double>(), b.loss.item<double>(), 1e-5 * b.loss.item<double>());
  EXPECT_LT(max_rel(a.h, b.h.to(at::kDouble)), 1e-2);
  EXPECT_LT(max_rel(a.w, b.w.to(at::kDouble)), 1e-2);
  EXPECT_EQ(a.w.scalar_type(), at::kFloat);
}

// Finite inputs whose logits overflow, as a bf16 or fp32 matmul's can: h[2][0] = big, W[3][0] = +-big
// and W's other rows 0 in that column give row 2 a +-inf logit and finite others; h[2][0] = NaN a
// row of NaN. Its loss is NaN on the fused and the ATen path, in fp64, fp32 and bf16 autocast (so
// the mean loss too, which train.on_nonfinite checks); the other rows keep their finite losses.
TEST(FusedLossHead, AnOverflowingLogitGivesANaNLossOnBothPaths) {
  struct Case {
    at::ScalarType dtype;
    bool bf16;
  };
  for (const auto& c : {Case{at::kDouble, false}, Case{at::kFloat, false}, Case{at::kFloat, true}})
    for (double bad : {1.0, -1.0, double(NAN)})
      for (bool fused : {true, false}) {
        torch::manual_seed(13);
        const double big = c.dtype == at::kDouble ? 1e200 : 1e30;
        auto h = torch::randn({6, 4}, c.dtype), w = torch::randn({9, 4}, c.dtype);
        h.select(1, 0).zero_(), w.select(1, 0).zero_();
        if (std::isnan(bad))
          h[2][0] = bad;
        else
          h[2][0] = big, w[3][0] = bad * big;
        const auto y = torch::randint(0, 9, {6}, torch::kLong);
        const ember::testing::ScopedFusion path(ember::kernels::Op::loss_head, fused);
        ember::AutocastScope amp(at::kCPU, c.bf16);
        const auto rows = ember::linear_cross_entropy_per_row(h, w, y, 1.0, 4);
        const auto mean = ember::linear_cross_entropy(h.requires_grad_(), w, y, 1.0, 4);
        const std::string what = std::string(c10::toString(c.dtype)) + (c.bf16 ? " bf16" : "") + " " +
                                 std::to_string(bad) + (fused ? " fused" : " ATen");
        EXPECT_TRUE(std::isnan(rows[2].item<double>())) << what;
        EXPECT_TRUE(rows.index_select(0, torch::tensor({0, 1, 3, 4, 5})).isfinite().all().item<bool>()) << what;
        EXPECT_TRUE(std::isnan(mean.item<double>())) << what;
      }
}

// The fused head's gradient against central differences of its own loss, in float64.
TEST(FusedLossHead, GradientsMatchCentralDifferences) {
  struct Head : torch::nn::Module {
    at::Tensor h, w;
    Head() {
      h = register_parameter("h", torch::randn({9, 5}, torch::kDouble));
      w = register_parameter("w", torch::randn({17, 5}, torch::kDouble));
    }
  };
  torch::manual_seed(9);
  Head head;
  const auto y = torch::randint(0, 17, {9}, torch::kLong);
  ASSERT_TRUE(ember::kernels::use_fused(ember::kernels::Op::loss_head, at::kCPU));
  ember::testing::expect_gradients_match_central_differences(
      head, [&] { return ember::linear_cross_entropy(head.h, head.w, y, 0.8, 4); }, {"h", "w"});
}

// training_loss(ids, targets, f) backpropagated as it is gives what loss() * f gives through
// autograd. It hands its gradients on as formed (LossGradient::root) only when the loss receives a
// gradient of 1; a loss scaled afterwards, a loss plus a term of its own (here one of the head's
// weight, which reaches a tied table beside the handoff), and two training losses summed each give
// what loss() gives too, tied and untied, on the fused and the ATen path.
TEST(FusedLossHead, TheRootLossHonoursTheGradientItReceives) {
  using Loss = std::function<at::Tensor(ember::LanguageModel&, bool root)>;
  const auto ids = torch::randint(0, 40, {2, 8}, torch::kLong), targets = torch::randint(0, 40, {2, 8}, torch::kLong);
  const auto ids2 = torch::randint(0, 40, {2, 8}, torch::kLong), targets2 = torch::randint(0, 40, {2, 8}, torch::kLong);
  const auto loss_of = [&](ember::LanguageModel& m, bool root, const at::Tensor& i, const at::Tensor& t, double f) {
    return root ? m.training_loss(i, t, f) : m.loss(i, t) * f;
  };
  const std::vector<std::pair<std::string, Loss>> cases = {
      {"loss folding f", [&](auto& m, bool root) { return loss_of(m, root, ids, targets, 0.5); }},
      {"0.5 * loss", [&](auto& m, bool root) { return 0.5 * loss_of(m, root, ids, targets, 1.0); }},
      {"loss + aux",
       [&](auto& m, bool root) { return loss_of(m, root, ids, targets, 0.5) + 0.3 * m.head_weight().square().sum(); }},
      {"two losses",
       [&](auto& m, bool root) { return loss_of(m, root, ids, targets, 1.0) + loss_of(m, root, ids2, targets2, 0.5); }},
      {"3 * (loss + loss)",
       [&](auto& m, bool root) {
         return 3.0 * (loss_of(m, root, ids, targets, 0.5) + loss_of(m, root, ids2, targets2, 1.0));
       }},
  };
  for (std::string kind : {"tied", "untied"})
    for (bool fused : {true, false})
      for (const auto& [name, loss] : cases) {
        ember::ModelConfig c;
        c.vocab_size = 40, c.d_model = 16, c.n_layers = 1, c.n_heads = 2, c.max_seq_len = 16, c.mlp.d_ff = 32;
        c.embedding.kind = kind;
        torch::manual_seed(14);
        ember::LanguageModel a(c), b(c);
        ember::load_parameters(b, ember::module_tensors(a), "copy");
        a.to(torch::kDouble), b.to(torch::kDouble);
        const ember::testing::ScopedFusion path(ember::kernels::Op::loss_head, fused);
        for (int micro = 0; micro < 2; ++micro) {  // accumulated over two micro-steps, as the trainer does
          auto la = loss(a, true), lb = loss(b, false);
          EXPECT_NEAR(la.item<double>(), lb.item<double>(), 1e-12) << kind << " " << name;
          la.backward(), lb.backward();
        }
        auto pb = b.named_parameters();
        for (const auto& p : a.named_parameters())
          EXPECT_LT((p.value().grad() - pb[p.key()].grad()).abs().max().item<double>(), 1e-12)
              << kind << (fused ? " fused " : " ATen ") << name << " " << p.key();
      }
}

// A tied table's two gradients meet in place (model/tied_gradient.h): in backward the lookup's
// sparse rows are added into the head's dense V x D gradient with add_, where autograd's buffer would
// add them out of place (a copy of the table); the values are those of the plain path (the test above).
TEST(FusedLossHead, ATiedTablesLookupAddsIntoTheHeadsGradientInPlace) {
  ember::ModelConfig c;
  c.vocab_size = 40, c.d_model = 16, c.n_layers = 1, c.n_heads = 2, c.max_seq_len = 16, c.mlp.d_ff = 32;
  c.embedding.kind = "tied";
  torch::manual_seed(11);
  ember::LanguageModel m(c);
  auto ids = torch::randint(0, 40, {2, 8}, torch::kLong), targets = torch::randint(0, 40, {2, 8}, torch::kLong);
  static std::atomic<int> in_place{0}, out_of_place{0};  // adds with a sparse operand, by kind
  in_place = 0, out_of_place = 0;
  auto loss = m.training_loss(ids, targets, 1.0);
  const auto handle = at::addThreadLocalCallback(
      at::RecordFunctionCallback([](const at::RecordFunction& fn) -> std::unique_ptr<at::ObserverContext> {
        const std::string name = fn.name();
        if (name != "aten::add" && name != "aten::add_") return nullptr;
        bool sparse = false;
        int tensors = 0;  // add.out (3: into its first operand, as add_ runs it) is not a new tensor
        for (const auto& v : fn.inputs())
          if (v.isTensor()) ++tensors, sparse = sparse || v.toTensor().is_sparse();
        if (sparse && name == "aten::add_") ++in_place;
        if (sparse && name == "aten::add" && tensors == 2) ++out_of_place;
        return nullptr;
      }).needsInputs(true));
  loss.backward();
  at::removeCallback(handle);
  EXPECT_EQ(in_place.load(), 1);
  EXPECT_EQ(out_of_place.load(), 0);
  EXPECT_FALSE(m.embedding().tied_table().grad().is_sparse());
}

}  // namespace
}  // namespace xent_kernel
