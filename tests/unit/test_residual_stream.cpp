// The residual stream and its pending addition (model/residual_stream.h): normed() against the
// formula in fp64, with and without a pending addition, fused and on ATen's ops, values and
// gradients; the norm's output type (the one asked for where a pending addition is made, else the
// stream's; in a model under autocast, every block's mixer input by that rule); add() and
// sum(); a whole model, every addition folded, against its blocks spelled out with each addition
// an op of its own; a block checkpointed on the stream against the plain block.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "ember/model/activation_checkpoint.h"
#include "ember/model/autocast.h"
#include "ember/model/lm.h"
#include "ember/model/mixers/hope_attention.h"
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

ember::ModelConfig small(const std::string& mixer) {
  ember::ModelConfig c;
  c.vocab_size = 40, c.d_model = 32, c.n_layers = 3, c.n_heads = 4, c.max_seq_len = 16, c.mlp.d_ff = 48;
  c.mixer.kind = mixer;
  if (mixer == "hope_attention") c.mixer.get<ember::HopeAttentionConfig>().levels = 3;  // a chain of three norms
  return c;
}

// Under autocast the mixer of every block after the first, whose norm makes the addition pending
// on its input, reads the norm's output in bf16 when it reads it only through projections (which
// would cast it anyway), and in fp32 otherwise; the first block's norm, with nothing pending on the
// embedding, writes fp32. The stream stays fp32.
TEST(ResidualStream, UnderAutocastTheMixerInputFollowsTheOneRule) {
  for (const std::string mixer : {"attention", "short_conv"}) {
    torch::manual_seed(13);
    ember::LanguageModel m(small(mixer));
    const auto ids = torch::randint(0, 40, {2, 16});
    const ember::AutocastScope amp(at::kCPU, true);
    const auto traces = m.trace(ids);
    for (size_t l = 0; l < traces.size(); ++l) {
      const auto want = mixer == "attention" && l > 0 ? at::kBFloat16 : at::kFloat;
      EXPECT_EQ(traces[l].mixer_input.scalar_type(), want) << mixer << " block " << l;
      EXPECT_EQ(traces[l].mixer_residual.scalar_type(), at::kFloat) << mixer << " block " << l;
    }
  }
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

// The model's final-normed hidden states with every addition an op of its own, through the norms',
// mixers' and MLPs' own forward(): x <- x + Mixer(RMSNorm(x)), x <- x + MLP_l(RMSNorm_l(x)) for
// each MLP of the chain, then the final norm.
at::Tensor unfused_hidden(ember::LanguageModel& m, const at::Tensor& ids) {
  auto x = m.embedding().forward(ids);
  for (const auto& block : m.blocks()) {
    const auto modules = block->named_children();
    auto norm = [&](const std::string& name) { return std::dynamic_pointer_cast<ember::RMSNorm>(modules[name]); };
    x = x + block->mixer().forward(norm("mixer_norm")->forward(x), m.rope());
    for (size_t l = 0; l < block->mlps().size(); ++l)
      x = x + block->mlps()[l]->forward(norm(l == 0 ? "mlp_norm" : "mlp_norm_" + std::to_string(l))->forward(x));
  }
  return m.parts().final_norm.forward(x);
}

std::vector<at::Tensor> gradients(ember::LanguageModel& m, const at::Tensor& loss) {
  m.zero_grad();
  loss.backward();
  std::vector<at::Tensor> out;
  for (const auto& p : m.parameters()) {
    const auto g = p.grad();
    out.push_back(!g.defined() ? at::zeros_like(p) : g.is_sparse() ? g.to_dense() : g.clone());
  }
  return out;
}

// LanguageModel::hidden (each addition folded into the next norm's pass, the last block's into the
// final norm's) and the trace against the unfused model in fp64: the hidden states and every
// parameter's gradient, for attention, a CMS chain of three levels and short_conv, fused norms and
// ATen's, with and without activation checkpointing of every other block; the trace's parts add
// up to the stream.
TEST(ResidualStream, AModelWithEveryAdditionFoldedEqualsTheUnfusedOne) {
  for (const std::string mixer : {"attention", "hope_attention", "short_conv"})
    for (const bool fused : {true, false}) {
      const NormPath path(fused);
      torch::manual_seed(4);
      ember::LanguageModel m(small(mixer));
      m.to(at::kDouble);
      const auto ids = torch::randint(0, 40, {2, 16});
      const auto probe = torch::randn({2, 16, 32}, torch::kDouble);
      const auto want = unfused_hidden(m, ids);
      const auto want_grads = gradients(m, (want * probe).sum());
      for (const bool checkpointing : {false, true}) {
        m.set_activation_checkpointing(
            checkpointing ? ember::ActivationCheckpointing::every_k : ember::ActivationCheckpointing::none, 2);
        const auto h = m.hidden(ids);
        const std::string what = mixer + (fused ? ", fused" : ", ATen") + (checkpointing ? ", checkpointed" : "");
        EXPECT_LE(relative(h.detach(), want.detach()), 1e-13) << what;
        const auto got = gradients(m, (h * probe).sum());
        ASSERT_EQ(got.size(), want_grads.size());
        for (size_t i = 0; i < got.size(); ++i)
          EXPECT_LE(relative(got[i], want_grads[i]), 1e-12) << what << " gradient " << i;
      }
      torch::NoGradGuard no_grad;
      const auto traces = m.trace(ids);
      for (size_t l = 0; l < traces.size(); ++l) {
        const auto& t = traces[l];
        EXPECT_TRUE(torch::equal(t.mlp_residual, t.mixer_residual + t.mixer_out)) << mixer << " block " << l;
        const auto out = t.mlp_residual + t.mlp_out;
        const auto next = l + 1 < traces.size() ? traces[l + 1].mixer_residual : at::Tensor();
        EXPECT_LE(relative(next.defined() ? out : m.parts().final_norm.forward(out), next.defined() ? next : want),
                  next.defined() ? 1e-15 : 1e-13)
            << mixer << " block " << l;
      }
    }
}

// A block checkpointed on the stream (activation_checkpoint.h) hands on the stream and the pending
// addition that the plain block does, and the same gradients to both inputs and every parameter,
// whether its input had an addition pending (every block but the first) or not.
TEST(ResidualStream, ABlockCheckpointedOnTheStreamEqualsThePlainBlock) {
  torch::manual_seed(5);
  ember::LanguageModel m(small("hope_attention"));
  m.to(at::kDouble);
  auto& block = *m.blocks().front();
  const auto& rope = m.rope();
  const auto x0 = torch::randn({2, 16, 32}, torch::kDouble), p0 = torch::randn({2, 16, 32}, torch::kDouble);
  const auto a = torch::randn({2, 16, 32}, torch::kDouble), b = torch::randn({2, 16, 32}, torch::kDouble);
  for (const bool pending : {false, true}) {
    auto run = [&](bool recompute) {
      auto x = x0.clone().requires_grad_(), p = p0.clone().requires_grad_();
      ResidualStream stream(x, pending ? p : at::Tensor());
      const ember::StreamBlockFn fn = [&block, &rope](ResidualStream& s) { block.forward(s, rope); };
      if (recompute)
        stream = ember::checkpointed(fn, stream);
      else
        fn(stream);
      const auto out = stream.tensors();
      EXPECT_EQ(out.size(), 2u);
      std::vector<at::Tensor> result{out[0].detach(), out[1].detach()};
      auto grads = gradients(m, (out[0] * a).sum() + (out[1] * b).sum());
      result.insert(result.end(), grads.begin(), grads.end());
      result.push_back(x.grad());
      if (pending) result.push_back(p.grad());
      return result;
    };
    const auto plain = run(false), checkpointed = run(true);
    ASSERT_EQ(plain.size(), checkpointed.size());
    for (size_t i = 0; i < plain.size(); ++i)
      EXPECT_TRUE(torch::equal(plain[i], checkpointed[i]))
          << (pending ? "pending" : "nothing pending") << ", tensor " << i;
  }
}

}  // namespace
}  // namespace residual_stream_test
