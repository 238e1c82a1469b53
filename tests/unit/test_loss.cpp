// The chunked linear cross-entropy (model/linear_cross_entropy.h) against the materialised
// reference at::cross_entropy_loss(s h W^T, y): loss and both gradients in float64 for chunk sizes
// that do and do not divide N, with an incoming gradient other than 1; fp32 and bf16 autocast
// against the same path as Python takes; no graph in evaluation; the model's loss equals CE of its
// logits, tied and untied; ignore_index against an independent float64 formula, on both paths.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "ember/run/parameters.h"
#include "ember/model/autocast.h"
#include "ember/model/linear_cross_entropy.h"
#include "ember/model/lm.h"
#include "kernels/xent.h"
#include "test_helpers.h"

namespace {

struct Grads {
  at::Tensor loss, h, w;
};

template <class LossFn>
Grads run(const at::Tensor& h0, const at::Tensor& w0, LossFn loss_fn, double upstream) {
  auto h = h0.clone().requires_grad_(), w = w0.clone().requires_grad_();
  auto loss = loss_fn(h, w);
  (loss * upstream).backward();
  return {loss.detach(), h.grad(), w.grad()};
}

double rel(const at::Tensor& a, const at::Tensor& b) {
  return (a.to(at::kDouble) - b.to(at::kDouble)).norm().item<double>() / b.to(at::kDouble).norm().item<double>();
}

double max_abs(const at::Tensor& a, const at::Tensor& b) { return (a - b).abs().max().item<double>(); }

// F.cross_entropy(s h W^T, y, ignore_index) written out in float64: K = the rows whose target is
// not `ignore`, loss = sum over them of CE / max(K, 1), per row CE (0 when ignored), and the
// gradient of the logits G = (softmax(s z) - onehot(y)) s / max(K, 1) on kept rows, 0 on the
// others: dL/dh = G W, dL/dW = G^T h.
struct Expected {
  at::Tensor loss, per_row, h, w;
};
Expected ignoring_reference(const at::Tensor& h, const at::Tensor& w, const at::Tensor& y, double s, int64_t ignore) {
  const auto kept = y.ne(ignore), ys = at::where(kept, y, 0);
  const double K = std::max<double>(kept.sum().item<double>(), 1.0);
  const auto log_p = at::log_softmax(s * h.mm(w.t()), 1);
  const auto per_row = -log_p.gather(1, ys.unsqueeze(1)).squeeze(1) * kept;
  const auto G = (log_p.exp() - at::one_hot(ys, w.size(0)).to(at::kDouble)) * kept.unsqueeze(1) * (s / K);
  return {per_row.sum() / K, per_row, G.mm(w), G.t().mm(h)};
}

struct FusedSwitch : ember::testing::ScopedFusion {  // picks the loss head's path for a scope
  explicit FusedSwitch(bool on) : ScopedFusion(ember::kernels::Op::loss_head, on) {}
};

}  // namespace

TEST(LinearCrossEntropy, EqualsTheMaterialisedLossAndGradientsInFloat64) {
  torch::manual_seed(1);
  const int64_t N = 10, D = 6, V = 13;
  auto h = torch::randn({N, D}, torch::kDouble), w = torch::randn({V, D}, torch::kDouble);
  auto y = torch::randint(0, V, {N}, torch::kLong);
  for (double scale : {1.0, 0.37}) {
    auto ref = run(
        h, w, [&](auto& a, auto& b) { return at::cross_entropy_loss(at::linear(a, b) * scale, y); }, 3.0);
    for (int64_t rows : {1, 3, 7, 10, 100}) {
      auto got = run(
          h, w, [&](auto& a, auto& b) { return ember::linear_cross_entropy(a, b, y, scale, rows); }, 3.0);
      EXPECT_NEAR(got.loss.item<double>(), ref.loss.item<double>(), 1e-12) << rows;
      EXPECT_LT((got.h - ref.h).abs().max().item<double>(), 1e-12) << rows;
      EXPECT_LT((got.w - ref.w).abs().max().item<double>(), 1e-12) << rows;
    }
  }
}

TEST(LinearCrossEntropy, Fp32AndBf16AutocastMatchThePathPythonTakes) {
  torch::manual_seed(2);
  const int64_t N = 64, D = 32, V = 300;
  auto h = torch::randn({N, D}), w = 0.2 * torch::randn({V, D});
  auto y = torch::randint(0, V, {N}, torch::kLong);
  auto ref64 = run(
      h.to(torch::kDouble), w.to(torch::kDouble),
      [&](auto& a, auto& b) { return at::cross_entropy_loss(at::linear(a, b), y); }, 1.0);
  auto got = run(
      h, w, [&](auto& a, auto& b) { return ember::linear_cross_entropy(a, b, y, 1.0, 17); }, 1.0);
  EXPECT_EQ(got.loss.scalar_type(), at::kFloat);
  EXPECT_NEAR(got.loss.item<double>(), ref64.loss.item<double>(), 1e-5);
  EXPECT_LT(rel(got.h, ref64.h), 1e-5);
  EXPECT_LT(rel(got.w, ref64.w), 1e-5);
  // bf16 autocast: logits from a bf16 matmul, loss in fp32 (as `F.cross_entropy(model(x).float(), y)`).
  ember::AutocastScope bf16(at::kCPU, true);
  auto ref = run(
      h, w, [&](auto& a, auto& b) { return at::cross_entropy_loss(at::linear(a, b).to(at::kFloat), y); }, 1.0);
  auto amp = run(
      h, w, [&](auto& a, auto& b) { return ember::linear_cross_entropy(a, b, y, 1.0, 17); }, 1.0);
  EXPECT_EQ(amp.loss.scalar_type(), at::kFloat);
  EXPECT_NEAR(amp.loss.item<double>(), ref.loss.item<double>(), 1e-5 * ref.loss.item<double>());
  EXPECT_LT(rel(amp.h, ref.h), 2e-2);
  EXPECT_LT(rel(amp.w, ref.w), 2e-2);
  EXPECT_EQ(amp.h.scalar_type(), at::kFloat);  // gradients come back in the parameters' dtype
}

TEST(LinearCrossEntropy, EvaluationBuildsNoGraphAndGivesTheSameLoss) {
  torch::manual_seed(3);
  auto h = torch::randn({9, 4}).requires_grad_(), w = torch::randn({11, 4}).requires_grad_();
  auto y = torch::randint(0, 11, {9}, torch::kLong);
  const double with_graph = ember::linear_cross_entropy(h, w, y, 1.0, 4).item<double>();
  torch::NoGradGuard no_grad;
  auto loss = ember::linear_cross_entropy(h, w, y, 1.0, 4);
  EXPECT_FALSE(loss.requires_grad());
  EXPECT_DOUBLE_EQ(loss.item<double>(), with_graph);
  EXPECT_GT(ember::xent::chunk_rows(200376), 100);  // ~256 MB of fp32 logits per chunk
  EXPECT_LT(ember::xent::chunk_rows(200376), 400);
}

TEST(LinearCrossEntropy, ChunksSplitTheRowsEvenlyWithinTheDevicesBudget) {
  const int64_t cpu = ember::xent::chunk_rows(200376, ember::xent::chunk_budget_bytes(false));
  const int64_t gpu = ember::xent::chunk_rows(200376, ember::xent::chunk_budget_bytes(true));
  EXPECT_EQ(cpu, (int64_t{256} << 20) / (4 * 200376));  // 334 rows
  EXPECT_EQ(gpu, (int64_t{4} << 30) / (4 * 200376));    // 5358 rows
  // 16384 rows (8 x 2048): 50 chunks of 328 rather than 49 of 334 and one of 18; 4 of 4096 on a GPU
  EXPECT_EQ(ember::xent::balanced_chunk_rows(16384, cpu), 328);
  EXPECT_EQ(ember::xent::balanced_chunk_rows(16384, gpu), 4096);
  EXPECT_EQ(ember::xent::balanced_chunk_rows(100, 30), 25);
  EXPECT_EQ(ember::xent::balanced_chunk_rows(7, 30), 7);  // one chunk
  EXPECT_EQ(ember::xent::balanced_chunk_rows(0, 30), 1);
  for (int64_t n : {1, 2, 99, 1000, 16383})
    for (int64_t most : {1, 3, 64, 999}) {
      const int64_t rows = ember::xent::balanced_chunk_rows(n, most), chunks = (n + rows - 1) / rows;
      EXPECT_LE(rows, most) << n << " " << most;
      EXPECT_EQ(chunks, (n + most - 1) / most) << n << " " << most;  // no more chunks than needed
      EXPECT_LT(chunks * rows - n, chunks) << n << " " << most;      // chunks differ by at most a row
    }
}

TEST(LinearCrossEntropy, TheModelLossEqualsCrossEntropyOfItsLogitsTiedAndUntied) {
  for (std::string kind : {"tied", "untied"}) {
    ember::ModelConfig c;
    c.vocab_size = 40, c.d_model = 16, c.n_layers = 1, c.n_heads = 2, c.max_seq_len = 16, c.mlp.d_ff = 32;
    c.embedding.kind = kind;
    c.embedding.output_scale = 0.5;
    torch::manual_seed(4);
    ember::LanguageModel a(c), b(c);
    ember::load_parameters(b, ember::module_tensors(a), "copy");  // the same weights
    a.to(torch::kDouble), b.to(torch::kDouble);
    auto ids = torch::randint(0, 40, {2, 8}, torch::kLong), targets = torch::randint(0, 40, {2, 8}, torch::kLong);
    auto la = a.loss(ids, targets);
    auto logits = b.forward(ids);
    auto lb = at::cross_entropy_loss(logits.reshape({-1, 40}), targets.reshape({-1}));
    EXPECT_NEAR(la.item<double>(), lb.item<double>(), 1e-12) << kind;
    la.backward(), lb.backward();
    auto pa = a.named_parameters(), pb = b.named_parameters();
    for (const auto& p : pa)
      EXPECT_LT((p.value().grad() - pb[p.key()].grad()).abs().max().item<double>(), 1e-12) << kind << " " << p.key();
  }
}

// Rows 0-6 ignored (at 5 rows a chunk, the first chunk wholly), and two more among the rest; the
// loss, its gradients (through autograd with an incoming gradient of 3), the per-row losses and
// the parts equal the float64 formula on both paths, for the default ignore index and one inside
// the vocabulary.
TEST(LinearCrossEntropy, IgnoreIndexEqualsAnIndependentFloat64Formula) {
  torch::manual_seed(5);
  const int64_t N = 23, D = 6, V = 13;
  const auto h = torch::randn({N, D}, torch::kDouble), w = torch::randn({V, D}, torch::kDouble);
  for (int64_t ignore : {int64_t{-100}, int64_t{4}}) {
    auto y = torch::randint(0, V, {N}, torch::kLong);
    if (ignore != -100) y.masked_fill_(y.eq(ignore), 5);  // only the rows set below are ignored
    y.narrow(0, 0, 7).fill_(ignore), y[12] = ignore, y[20] = ignore;
    const auto want = ignoring_reference(h, w, y, 0.6, ignore);
    for (bool fused : {true, false}) {
      FusedSwitch path(fused);
      for (int64_t rows : {1, 5, 7, 100}) {
        const auto got = run(
            h, w, [&](auto& a, auto& b) { return ember::linear_cross_entropy(a, b, y, 0.6, rows, {}, ignore); }, 3.0);
        const std::string what = std::to_string(ignore) + (fused ? " fused " : " ATen ") + std::to_string(rows);
        EXPECT_NEAR(got.loss.item<double>(), want.loss.item<double>(), 1e-12) << what;
        EXPECT_LT(max_abs(got.h, 3.0 * want.h), 1e-12) << what;
        EXPECT_LT(max_abs(got.w, 3.0 * want.w), 1e-12) << what;
        EXPECT_LT(max_abs(ember::linear_cross_entropy_per_row(h, w, y, 0.6, rows, ignore), want.per_row), 1e-12)
            << what;
        const auto parts = ember::linear_cross_entropy_parts(h, w, y, 0.6, rows, ignore);
        EXPECT_NEAR(parts.loss.item<double>(), want.loss.item<double>(), 1e-12) << what;
        EXPECT_LT(max_abs(parts.grad_hidden, want.h), 1e-12) << what;
        EXPECT_LT(max_abs(parts.grad_weight, want.w), 1e-12) << what;
        // The trainer's folded factor and root: the mean over the kept rows, times the factor.
        auto hr = h.clone().requires_grad_(), wr = w.clone().requires_grad_();
        auto folded = ember::linear_cross_entropy(hr, wr, y, 0.6, rows, {0.25, true, nullptr}, ignore);
        folded.backward();
        EXPECT_NEAR(folded.item<double>(), 0.25 * want.loss.item<double>(), 1e-12) << what;
        EXPECT_LT(max_abs(hr.grad(), 0.25 * want.h), 1e-12) << what;
        EXPECT_LT(max_abs(wr.grad(), 0.25 * want.w), 1e-12) << what;
      }
    }
  }
}

// No row to take the mean over: loss 0 and zero gradients (not 0 / 0), on both paths, in fp64, fp32
// and bf16 autocast, also without a graph.
TEST(LinearCrossEntropy, AnAllIgnoredBatchHasZeroLossAndGradients) {
  const auto y = torch::full({9}, -100, torch::kLong);
  for (bool fused : {true, false})
    for (bool bf16 : {false, true})
      for (auto dtype : {at::kDouble, at::kFloat}) {
        if (bf16 && dtype == at::kDouble) continue;
        FusedSwitch path(fused);
        ember::AutocastScope amp(at::kCPU, bf16);
        const auto got = run(
            torch::randn({9, 4}, dtype), torch::randn({11, 4}, dtype),
            [&](auto& a, auto& b) { return ember::linear_cross_entropy(a, b, y, 1.0, 4); }, 1.0);
        const std::string what = std::string(fused ? "fused " : "ATen ") + (bf16 ? "bf16 " : "") + c10::toString(dtype);
        EXPECT_EQ(got.loss.item<double>(), 0.0) << what;
        EXPECT_TRUE(got.h.eq(0).all().item<bool>() && got.w.eq(0).all().item<bool>()) << what;
        torch::NoGradGuard no_graph;
        EXPECT_EQ(
            ember::linear_cross_entropy(torch::randn({9, 4}, dtype), torch::randn({11, 4}, dtype), y).item<double>(),
            0.0)
            << what;
      }
}

// A target outside [0, V) that is not the ignore index stays an error on a CPU, on both paths.
TEST(LinearCrossEntropy, ATargetOutsideTheVocabularyIsStillAnError) {
  const auto h = torch::randn({6, 4}).requires_grad_(), w = torch::randn({11, 4});
  for (bool fused : {true, false})
    for (int64_t bad : {11, -1, -100}) {
      FusedSwitch path(fused);
      auto y = torch::randint(0, 11, {6}, torch::kLong);
      y[4] = bad;
      const int64_t ignore = bad == -100 ? 3 : -100;
      y.masked_fill_(y.eq(ignore), 0);
      EXPECT_ANY_THROW(ember::linear_cross_entropy(h, w, y, 1.0, 4, {}, ignore)) << fused << " " << bad;
      EXPECT_ANY_THROW(ember::linear_cross_entropy_per_row(h, w, y, 1.0, 4, ignore)) << fused << " " << bad;
    }
}
