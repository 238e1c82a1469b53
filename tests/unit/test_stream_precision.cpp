// Every embedding kind hands the blocks an fp32 residual stream under bf16 autocast (model/
// embedding.h), so every kind takes the fused norms (kernels/rms_norm.h needs an fp32 or fp64 stream)
// and makes its residual adds in fp32: the paper's baselines and LEV are compared under the same
// numerics. Counted, as a profile counts them, through the ops ember's kernels record
// (kernels/recorded_op.h) and ATen's, in a forward and backward of a small model of each kind.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <atomic>
#include <string>

#include "ember/model/autocast.h"
#include "ember/model/embedding_registry.h"
#include "ember/model/embedding_baselines.h"
#include "ember/model/lev.h"
#include "ember/model/lm.h"
#include "ember/model/norm.h"
#include "test_helpers.h"

namespace stream_precision {
namespace {

struct NormOps {
  int fused = 0;  // ember::rms_norm and ember::add_rms_norm
  int aten = 0;   // aten::rms_norm
};

std::atomic<int> fused_norms{0}, aten_norms{0};

// The norm ops of f(), counted on every thread (backward's included).
NormOps norm_ops_of(const std::function<void()>& f) {
  fused_norms = 0, aten_norms = 0;
  const auto handle = at::addGlobalCallback(
      at::RecordFunctionCallback([](const at::RecordFunction& fn) -> std::unique_ptr<at::ObserverContext> {
        const std::string name = fn.name();
        if (name == "ember::rms_norm" || name == "ember::add_rms_norm") ++fused_norms;
        if (name == "aten::rms_norm") ++aten_norms;
        return nullptr;
      }));
  f();
  at::removeCallback(handle);
  return {fused_norms.load(), aten_norms.load()};
}

ember::ModelConfig small_model(const std::string& kind) {
  ember::ModelConfig c;
  c.vocab_size = 64, c.d_model = 32, c.n_layers = 2, c.n_heads = 4, c.max_seq_len = 16, c.mlp.d_ff = 64;
  c.embedding.kind = kind;
  auto& lev = c.embedding.get<ember::LevConfig>();
  lev.d_seed = 8, lev.heads = 2, lev.knots = 5, lev.rank = 4;
  c.embedding.get<ember::FlatMlpConfig>() = {.seed_dim = 4, .hidden = 16};
  c.embedding.get<ember::FactoredMlpConfig>().hidden = 16;
  return c;
}

TEST(StreamPrecision, EveryEmbeddingKindTakesTheFusedNormsUnderBf16Autocast) {
  const ember::testing::ScopedFusion fused(ember::kernels::Op::norm, true);
  size_t kinds = 0;
  for (const auto& row : ember::embedding_kinds()) {
    torch::manual_seed(12);
    ember::LanguageModel m(small_model(row.name));
    const auto ids = torch::randint(0, 64, {2, 16}, torch::kLong), targets = torch::roll(ids, 1, 1);
    at::ScalarType stream_type = at::kBFloat16;
    const auto ops = norm_ops_of([&] {
      at::Tensor loss;
      {
        ember::AutocastScope amp(at::kCPU, true);
        stream_type = m.embedding().forward(ids).scalar_type();
        loss = m.loss(ids, targets);
      }
      loss.backward();
    });
    EXPECT_EQ(stream_type, at::kFloat) << row.name;
    // Two blocks: each block's two norms and the final norm (their backward is rms_norm_backward).
    EXPECT_EQ(ops.fused, 5) << row.name;
    EXPECT_EQ(ops.aten, 0) << row.name;
    ++kinds;
  }
  EXPECT_EQ(kinds, 6u);
}

}  // namespace
}  // namespace stream_precision
