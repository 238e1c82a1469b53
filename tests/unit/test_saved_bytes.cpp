// What the memory estimate sums (train/memory_estimate.h) against what autograd really keeps, counted
// by the CPU allocator (cpu_live_bytes.h): each kernel's declared bytes per row (kernels/<op>.h,
// kernels/projections.h) exactly, on either path and in fp32 and bf16; and each mixer kind's block
// (Block::activation_bytes_per_token) within a tolerance. A kernel that starts saving one more
// tensor fails the first; a block whose ops change what they save, the second.
#include <gtest/gtest.h>
#include <torch/autograd.h>

#include "cpu_live_bytes.h"
#include "ember/model/autocast.h"
#include "kernels/projections.h"
#include "ember/model/lm.h"
#include "ember/model/mixers/titans/titans.h"
#include "kernels/rms_norm.h"
#include "kernels/rope.h"
#include "kernels/swiglu.h"
#include "test_helpers.h"

namespace {

using Outputs = std::vector<at::Tensor>;

// Bytes the graph of `run`'s outputs keeps alive of what `run` allocated, the outputs themselves
// dropped (an output autograd saved stays counted).
double graph_bytes(const std::function<Outputs()>& run) {
  ember::testing::CpuLiveBytes live;
  std::vector<c10::intrusive_ptr<torch::autograd::Node>> graph;
  for (auto& out : run()) graph.push_back(out.grad_fn());
  return static_cast<double>(live.bytes());
}

// Per row of `run` on the inputs `make` gives (made outside the count: the graph holds its leaves):
// its graph's bytes at 2R rows less those at R, over R, after a warm-up (what is made once, e.g.
// autocast's weight casts, does not count).
double per_row(const std::function<Outputs(int64_t rows)>& make, const std::function<Outputs(const Outputs&)>& run,
               int64_t rows = 96) {
  auto bytes = [&](int64_t r) {
    const auto inputs = make(r);
    return graph_bytes([&] { return run(inputs); });
  };
  bytes(rows);
  const double one = bytes(rows), two = bytes(2 * rows);
  return (two - one) / static_cast<double>(rows);
}

at::Tensor leaf(int64_t rows, int64_t width, at::ScalarType dtype = at::kFloat) {
  return at::randn({rows, width}).to(dtype).requires_grad_();
}

constexpr int64_t kWidth = 40;

}  // namespace

TEST(SavedBytes, RmsNormKeepsWhatItDeclares) {
  const auto g = at::ones({kWidth}).requires_grad_();
  for (bool fused : {true, false}) {
    const ember::testing::ScopedFusion path(ember::kernels::Op::norm, fused);
    for (auto y_type : {at::kFloat, at::kBFloat16}) {
      const double add_norm = per_row([&](int64_t r) { return Outputs{leaf(r, kWidth), leaf(r, kWidth)}; },
                                      [&](const Outputs& in) {
                                        auto [h, y] = ember::rms_norm::add_norm(in[0], in[1], g, 1e-6, y_type);
                                        return Outputs{h, y};
                                      });
      EXPECT_EQ(add_norm, ember::rms_norm::saved_bytes_per_row(kWidth, 4, fused)) << "fused " << fused;
    }
    const double norm = per_row([&](int64_t r) { return Outputs{leaf(r, kWidth)}; },
                                [&](const Outputs& in) {  // the input made here, as the embedding's is
                                  return Outputs{ember::rms_norm::norm(in[0] * 1.0, g, 1e-6)};
                                });
    EXPECT_EQ(norm, ember::rms_norm::saved_bytes_per_row(kWidth, 4, fused)) << "fused " << fused;
  }
}

TEST(SavedBytes, SwigluKeepsWhatItDeclares) {
  for (bool fused : {true, false})
    for (auto dtype : {at::kFloat, at::kBFloat16}) {
      const ember::testing::ScopedFusion path(ember::kernels::Op::swiglu, fused);
      const int64_t elem = dtype == at::kFloat ? 4 : 2;
      const double apart = per_row([&](int64_t r) { return Outputs{leaf(r, kWidth, dtype), leaf(r, kWidth, dtype)}; },
                                   [&](const Outputs& in) { return Outputs{ember::swiglu::gate(in[0] * 1.0, in[1] * 1.0)}; });
      EXPECT_EQ(apart, ember::swiglu::saved_bytes_per_row(kWidth, elem, fused)) << fused << " " << dtype;
      const double stacked = per_row([&](int64_t r) { return Outputs{leaf(r, 2 * kWidth, dtype)}; },
                                     [&](const Outputs& in) { return Outputs{ember::swiglu::gate_stacked(in[0] * 1.0)}; });
      EXPECT_EQ(stacked, ember::swiglu::saved_bytes_per_row(kWidth, elem, fused)) << fused << " " << dtype;
    }
}

TEST(SavedBytes, RopeKeepsWhatItDeclares) {
  const int64_t heads = 2, dh = 8;
  const auto cos = at::rand({512, dh / 2}), sin = at::rand({512, dh / 2});
  for (bool fused : {true, false}) {
    const ember::testing::ScopedFusion path(ember::kernels::Op::rope, fused);
    const double bytes = per_row(  // rows: positions of one sequence
        [&](int64_t r) { return Outputs{at::randn({1, heads, r, dh}).requires_grad_()}; },
        [&](const Outputs& in) { return Outputs{ember::rope::rotate(in[0] * 1.0, cos, sin, 0)}; });
    EXPECT_EQ(bytes, heads * ember::rope::saved_bytes_per_row()) << "fused " << fused;
  }
}

TEST(SavedBytes, ProjectionsKeepWhatTheyDeclare) {
  std::vector<at::Tensor> w;
  for (int64_t n : {24, 16, 16}) w.push_back(at::randn({n, kWidth}).requires_grad_());
  for (bool stacked : {true, false})
    for (bool bf16 : {false, true})
      for (auto x_type : {at::kFloat, at::kBFloat16}) {
        if (!bf16 && x_type == at::kBFloat16) continue;
        const ember::testing::ScopedFusion path(ember::kernels::Op::projections, stacked);
        const ember::AutocastScope autocast(at::kCPU, bf16);
        const double bytes = per_row(  // 64 rows or more: stacked where the path says so
            [&](int64_t r) { return Outputs{leaf(r, kWidth, x_type)}; },
            [&](const Outputs& in) { return ember::projections::of(in[0] * 1.0, w); });
        const int64_t x_elem = x_type == at::kFloat ? 4 : 2, matmul = bf16 ? 2 : 4;
        EXPECT_EQ(bytes, ember::projections::saved_bytes_per_row(kWidth, x_elem, matmul, 3, stacked))
            << "stacked " << stacked << " autocast " << bf16 << " x " << x_type;
      }
}

namespace {

// Bytes per token block `layer` keeps for backward, measured as the language model runs it: its
// stream fp32, an addition pending after the first block, under autocast for bf16; what it leaves
// pending for the next block is not kept. The difference of 2 and 4 sequences of T tokens, after a
// warm-up that builds what is made once (RoPE's tables).
double measured_block(ember::LanguageModel& m, size_t layer, int64_t T, bool bf16) {
  const auto& c = m.config();
  auto kept = [&](int64_t B) {
    const ember::AutocastScope autocast(at::kCPU, bf16);
    const auto ids = at::randint(c.vocab_size, {B, T}, at::kLong);
    const auto context = ember::chain_context(m.parts(), ids);
    at::Tensor pending;
    if (layer > 0) pending = at::randn({B, T, c.d_model}).to(bf16 ? at::kBFloat16 : at::kFloat).requires_grad_();
    ember::ResidualStream stream(at::randn({B, T, c.d_model}).requires_grad_(), pending);
    return graph_bytes([&] {
      m.blocks()[layer]->forward(stream, m.rope(), context);
      auto out = stream.tensors();
      stream = ember::ResidualStream(at::Tensor());
      return out;
    });
  };
  kept(1);
  return (kept(4) - kept(2)) / static_cast<double>(2 * T);
}

}  // namespace

// The declared bytes of every mixer kind's block against the measured ones, in fp32 and bf16 with
// the kernels `ember inspect --memory` counts on a CPU (auto; projections not stacked). Block 1: the
// steady state, its stream made by the block before (block 0's input is made before it, and under
// autocast it reads its norm's fp32 output). Within 2%: less than one more activation of width d
// in either precision; per-sequence terms (a convolution's padding) are left out of the declarations.
TEST(SavedBytes, EachBlockKeepsWhatItDeclares) {
  for (const auto& kind : ember::mixer_kind_names()) {
    if (kind == "titans") continue;  // per row of x~ and whole chunks: TitansBlockKeepsWhatItDeclares
    ember::ModelConfig c;
    c.vocab_size = 500, c.d_model = 64, c.n_layers = 2, c.n_heads = 4, c.max_seq_len = 128, c.mlp.d_ff = 160;
    c.mixer.kind = kind;
    ember::LanguageModel m(c);
    for (bool bf16 : {false, true}) {
      const double measured = measured_block(m, 1, 64, bf16);
      const double declared = m.blocks()[1]->activation_bytes_per_token(bf16 ? 2 : 4);
      EXPECT_NEAR(measured, declared, 0.02 * declared) << kind << (bf16 ? " bf16" : " fp32");
    }
  }
}

namespace {

struct TitansCase {
  ember::MemoryForm memory;
  ember::TitansVariant variant;
  ember::Retrieval retrieval;
  ember::InnerStep step = ember::InnerStep::plain;
  double clip = 1.0;
};

std::string name_of(const TitansCase& t) {
  return std::string(t.memory == ember::MemoryForm::mlp ? "mlp" : "linear") +
         (t.variant == ember::TitansVariant::mag ? " mag" : " lmm") +
         (t.retrieval == ember::Retrieval::after ? " after" : t.retrieval == ember::Retrieval::before ? " before" : " chunk") +
         (t.step == ember::InnerStep::normalized ? " normalized" : "") + (t.clip > 0 ? "" : " unclipped");
}

}  // namespace

// Titans' block against its declaration. Its mixer declares bytes per row of x~ = P || x, the N_p
// persistent rows joined to each sequence (a per-sequence term: per token of a sequence of T, the
// mixer keeps (T + N_p) / T times that), over whole chunks (a short last chunk keeps a whole chunk's
// state for fewer tokens): so T + N_p = 60 + 4 is four chunks of 16 here, and the mixer's share is
// scaled by 64 / 60; and its fresh first chunk keeps memory_scan_fresh_bytes_less less, per sequence.
// Within 2%, as every block; what is left is per sequence (neural_memory.h): the convolutions'
// padding, and of an MLP memory the last chunk's update operands (+0.6% linear, -0.2% MLP here).
TEST(SavedBytes, TitansBlockKeepsWhatItDeclares) {
  using ember::MemoryForm, ember::TitansVariant, ember::Retrieval, ember::InnerStep;
  const TitansCase cases[] = {
      {MemoryForm::mlp, TitansVariant::lmm, Retrieval::after},
      {MemoryForm::mlp, TitansVariant::lmm, Retrieval::before},
      {MemoryForm::mlp, TitansVariant::mag, Retrieval::after},
      {MemoryForm::mlp, TitansVariant::mag, Retrieval::before},
      {MemoryForm::linear, TitansVariant::lmm, Retrieval::after},
      {MemoryForm::linear, TitansVariant::lmm, Retrieval::before},
      {MemoryForm::linear, TitansVariant::mag, Retrieval::after},
      {MemoryForm::linear, TitansVariant::mag, Retrieval::before},
      {MemoryForm::mlp, TitansVariant::lmm, Retrieval::chunk},
      {MemoryForm::linear, TitansVariant::lmm, Retrieval::chunk},
      {MemoryForm::mlp, TitansVariant::lmm, Retrieval::before, InnerStep::normalized, 0.0},
      {MemoryForm::mlp, TitansVariant::lmm, Retrieval::after, InnerStep::normalized},
      {MemoryForm::linear, TitansVariant::lmm, Retrieval::after, InnerStep::normalized},
  };
  const int64_t T = 60, persistent = 4;
  for (const auto& t : cases) {
    ember::ModelConfig c;
    c.vocab_size = 500, c.d_model = 64, c.n_layers = 2, c.n_heads = 4, c.max_seq_len = 128, c.mlp.d_ff = 160;
    c.mixer.kind = "titans";
    auto& o = c.mixer.get<ember::TitansConfig>();
    o.memory = t.memory, o.variant = t.variant, o.retrieval = t.retrieval, o.inner_step = t.step;
    o.inner_grad_clip = t.clip, o.chunk_size = 16, o.persistent_tokens = persistent, o.window = 32;
    ember::LanguageModel m(c);
    auto& block = *m.blocks()[1];
    const int64_t hidden = t.memory == MemoryForm::mlp ? o.memory_expansion * (c.d_model / c.n_heads) : 0;
    for (bool bf16 : {false, true}) {
      const int64_t elem = bf16 ? 2 : 4;
      const double measured = measured_block(m, 1, T, bf16);
      const double fresh = static_cast<double>(c.n_heads) *
                           ember::memory_scan_fresh_bytes_less(c.d_model / c.n_heads, hidden, o.memory_rule());
      const double declared = block.activation_bytes_per_token(elem) +
                              block.mixer().activation_bytes_per_token(elem) * static_cast<double>(persistent) / T -
                              fresh / T;
      const std::string what = name_of(t) + (bf16 ? " bf16" : " fp32");
      if (t.retrieval != Retrieval::chunk) {
        EXPECT_NEAR(measured, declared, 0.02 * declared) << what;
        continue;
      }
      // Read at the chunk-start weights, the last chunk's inner step feeds no output and is freed:
      // the declaration is high by less than one chunk of the mixer per sequence.
      const double last_chunk = block.mixer().activation_bytes_per_token(elem) * o.chunk_size / T;
      EXPECT_LE(measured, 1.02 * declared) << what;
      EXPECT_GE(measured, declared - last_chunk) << what;
    }
  }
}

#include "ember/model/mixers/titans/titans.h"
#include <cstdio>
