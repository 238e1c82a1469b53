// bf16 autocast: matmuls run in bf16 inside the scope, the loss stays fp32, parameters fp32.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <ATen/autocast_mode.h>

#include "ember/model/autocast.h"
#include "ember/model/lm.h"

TEST(Autocast, Bf16ScopeOnCpu) {
  ember::ModelConfig c;
  c.vocab_size = 40, c.d_model = 32, c.n_layers = 1, c.n_heads = 2, c.max_seq_len = 16, c.mlp.d_ff = 64;
  ember::LanguageModel m(c);
  auto ids = torch::randint(0, 40, {2, 8}, torch::kLong);
  {
    ember::AutocastScope scope(at::kCPU, true);
    EXPECT_EQ(m.forward(ids).scalar_type(), at::kBFloat16);
    auto loss = m.loss(ids, ids);
    EXPECT_EQ(loss.scalar_type(), at::kFloat);
    loss.backward();
  }
  EXPECT_FALSE(at::autocast::is_autocast_enabled(at::kCPU));
  EXPECT_EQ(m.forward(ids).scalar_type(), at::kFloat);
  for (const auto& p : m.parameters()) {
    EXPECT_EQ(p.scalar_type(), at::kFloat);
    EXPECT_EQ(p.grad().scalar_type(), at::kFloat);
  }
}
