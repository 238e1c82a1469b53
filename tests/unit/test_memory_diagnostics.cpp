// ember analyze memory (eval/memory_diagnostics.h) against closed forms: with theta = 0 the memory
// only decays, W_t = prod_{j <= t} (1 - alpha_j) W_0, so |W_t| / |W_0| is that product per
// sequence and head; the contribution ||M(q) - q|| / ||q|| is computed from the read-out.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "ember/data/shard.h"
#include "ember/eval/memory_diagnostics.h"
#include "ember/model/lm.h"
#include "ember/model/mixers/titans/titans.h"
#include "ember/util/error.h"
#include "scratch.h"

namespace memory_diagnostics_test {  // named: its helpers share a unity group with other tests'
namespace {

constexpr int64_t kSeq = 20, kChunk = 8, kPersistent = 3;

ember::ModelConfig memory_model(double theta_max) {
  ember::ModelConfig c;
  c.vocab_size = 40, c.d_model = 16, c.n_layers = 2, c.n_heads = 2, c.max_seq_len = 32, c.mlp.d_ff = 24;
  c.mixer.kind = "titans";
  auto& o = c.mixer.get<ember::TitansConfig>();
  o.theta_max = theta_max, o.chunk_size = kChunk, o.persistent_tokens = kPersistent, o.memory_expansion = 2;
  return c;
}

std::unique_ptr<ember::BatchLoader> memory_loader(const std::string& name) {
  const auto dir = ember::testing::scratch_dir("memory_diagnostics", name);
  std::vector<uint32_t> tokens(2 * kSeq + 1);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<uint32_t>((i * 11 + 3) % 40);
  ember::write_shard(dir / "val.bin", tokens);
  ember::LoaderOptions o;
  o.batch = 2, o.seq_len = kSeq, o.shuffle = false;
  return std::make_unique<ember::BatchLoader>(std::vector<std::filesystem::path>{dir / "val.bin"}, o);
}

}  // namespace

TEST(MemoryDiagnostics, WithoutUpdatesTheWeightsDecayByTheProductOfTheForgetGates) {
  torch::manual_seed(3);
  ember::LanguageModel m(memory_model(0.0));
  m.to(torch::kDouble);
  auto loader = memory_loader("decay");
  const auto d = ember::memory_diagnostics(m, *loader, 0);
  ASSERT_EQ(d.layers.size(), 2u);
  EXPECT_EQ(d.sequences, 2);
  EXPECT_EQ(d.seq_len, kSeq);
  // The reference: the same layer's gates from its input, their running product per (b, h).
  torch::NoGradGuard ng;
  loader = memory_loader("decay");
  const auto ids = loader->next().narrow(1, 0, kSeq);
  const auto traces = m.trace(ids);
  for (size_t l = 0; l < 2; ++l) {
    const auto& titans = dynamic_cast<ember::Titans&>(m.blocks()[l]->mixer());
    const auto in = titans.memory_inputs(titans.with_persistent(traces[l].mixer_input), nullptr);
    const auto keep = at::cumprod(1 - in.alpha, -1);  // [B, H, N_p + T]
    const auto& chunks = d.layers[l].chunks;
    ASSERT_EQ(chunks.size(), 3u);  // 3 + 20 positions in chunks of 8
    for (size_t j = 0; j < chunks.size(); ++j) {
      const int64_t last = std::min<int64_t>((j + 1) * kChunk, kPersistent + kSeq) - 1;
      const double expected = keep.select(-1, last).mean().item<double>();
      EXPECT_NEAR(chunks[j].w1_ratio, expected, 1e-12) << "layer " << l << " chunk " << j;
      EXPECT_NEAR(chunks[j].w2_ratio, expected, 1e-12) << "layer " << l << " chunk " << j;
      EXPECT_EQ(chunks[j].end, last + 1 - kPersistent);
      EXPECT_NEAR(chunks[j].alpha, in.alpha.narrow(-1, j * kChunk, last + 1 - j * kChunk).mean().item<double>(),
                  1e-12);
    }
    EXPECT_DOUBLE_EQ(d.layers[l].alpha_bias.at(0), -4.0);  // the default, untrained
    EXPECT_GT(chunks[0].contribution, chunks[2].contribution);  // decaying towards M(q) = q
  }
}

TEST(MemoryDiagnostics, RefusesAModelWithoutTitans) {
  auto c = memory_model(0.1);
  c.mixer.kind = "attention";
  ember::LanguageModel m(c);
  auto loader = memory_loader("refuse");
  try {
    ember::memory_diagnostics(m, *loader, 1);
    FAIL() << "no error";
  } catch (const ember::UsageError& e) {
    EXPECT_STREQ(e.what(), "analyze memory: the model's mixer is 'attention', not titans");
  }
}

}  // namespace memory_diagnostics_test
