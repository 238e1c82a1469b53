// `ember inspect --memory` (train/memory_estimate.h): the estimate against its closed form on a
// small config: fp32 and bf16, GQA and gated attention, ZeRO-1 sharding, activation checkpointing.
#include <gtest/gtest.h>

#include "ember/model/lm.h"
#include "ember/model/linear_cross_entropy.h"
#include "ember/model/mixers/attention.h"
#include "ember/train/memory_estimate.h"
#include "test_helpers.h"

namespace {

ember::ModelConfig estimate_model() {
  ember::ModelConfig c;
  c.vocab_size = 1000, c.d_model = 64, c.n_layers = 3, c.n_heads = 4, c.max_seq_len = 128, c.mlp.d_ff = 160;
  return c;
}

}  // namespace

TEST(MemoryEstimate, MatchesTheClosedFormOfWhatEachPartKeeps) {
  const auto c = estimate_model();
  const double d = 64, f = 160, H = 4, L = 3, V = 1000, P = 1000 * 64 + L * (4 * d * d + 3 * d * f + 2 * d) + d;
  ember::MemoryOptions o;
  o.micro_batch = 2, o.seq_len = 100;
  const double N = 200;
  auto m = ember::estimate_training_memory(c, o);
  EXPECT_DOUBLE_EQ(m.parameters, 4 * P);
  EXPECT_DOUBLE_EQ(m.gradients, 4 * P);
  EXPECT_DOUBLE_EQ(m.optimizer, 8 * P);
  EXPECT_DOUBLE_EQ(m.autocast_copies, 0);
  // fp32 per block and token: two RMSNorms (the stream and 1/rms), attention (its input, q, k, v and the output W_O
  // reads + fp32 log-sum-exp per head), SwiGLU (its input, gate, up, product: the fused gate keeps no SiLU)
  const double block32 = 2 * (4 * d + 4) + (4 * d + 4 * 4 * d + 4 * H) + (4 * d + 3 * 4 * f);
  EXPECT_DOUBLE_EQ(m.activations_per_block_token, block32);
  EXPECT_DOUBLE_EQ(m.activations, N * (L * block32 + block32 + 8 * d));  // + one block in flight
  EXPECT_DOUBLE_EQ(m.loss, N * d * 4 + 4 * V * d + N * V * 4);  // fused: one chunk of fp32 logits
  o.precision = ember::Precision::bf16;
  auto b = ember::estimate_training_memory(c, o);
  // bf16: each norm keeps the fp32 stream, its reader the bf16 output it writes for it
  const double block16 = 2 * (4 * d + 4) + (2 * d + 4 * 2 * d + 4 * H) + (2 * d + 3 * 2 * f);
  EXPECT_DOUBLE_EQ(b.activations, N * (L * block16 + block16 + 8 * d));
  EXPECT_DOUBLE_EQ(b.autocast_copies, 2 * (P - L * 2 * d - d));  // every matrix (norm gains are 1-D)
  EXPECT_DOUBLE_EQ(b.gradient_buckets, 0);                       // one process: no buckets
  o.zero = 1, o.world = 8;
  EXPECT_DOUBLE_EQ(ember::estimate_training_memory(c, o).optimizer, 8 * P / 8);
  const double tensors = 1 + L * 9 + 1;  // the table, 9 per block (7 matrices, 2 norms), the final norm
  EXPECT_DOUBLE_EQ(ember::estimate_training_memory(c, o).gradient_buckets, 4 * (P + tensors));
  o.grad_comm_bf16 = true;
  EXPECT_DOUBLE_EQ(ember::estimate_training_memory(c, o).gradient_buckets, 2 * (P + tensors));
  o.grad_comm_bf16 = false;
  o.checkpointing = ember::ActivationCheckpointing::full;
  // a checkpointed block keeps the fp32 stream and, after the first, the bf16 addition pending on it
  EXPECT_DOUBLE_EQ(ember::estimate_training_memory(c, o).activations,
                   N * (L * 4 * d + (L - 1) * 2 * d + 2 * block16 + 8 * d));
  o.checkpointing = ember::ActivationCheckpointing::every_k, o.checkpointing_k = 2;  // blocks 0 and 2
  EXPECT_DOUBLE_EQ(ember::estimate_training_memory(c, o).activations, N * (2 * 4 * d + 2 * d + 3 * block16 + 8 * d));
}

TEST(MemoryEstimate, TheUnfusedSwiGLUGateAlsoKeepsSiLU) {
  const auto c = estimate_model();
  ember::MemoryOptions o;
  o.micro_batch = 1, o.seq_len = 10;
  const double fused = ember::estimate_training_memory(c, o).activations_per_block_token;
  const ember::testing::ScopedFusion aten_gate(ember::kernels::Op::swiglu, false);
  const double aten = ember::estimate_training_memory(c, o).activations_per_block_token;
  EXPECT_DOUBLE_EQ(aten, fused + 4 * 160);  // SiLU(gate), d_ff 160 in fp32
}

TEST(MemoryEstimate, GatedAttentionKeepsItsGateAndTheUngatedOutput) {
  auto c = estimate_model();
  ember::MemoryOptions o;
  o.micro_batch = 1, o.seq_len = 10;
  const double plain = ember::estimate_training_memory(c, o).activations_per_block_token;
  c.mixer.kind = "gated_attention";
  EXPECT_DOUBLE_EQ(ember::estimate_training_memory(c, o).activations_per_block_token, plain + 4 * 64 + 4 * 64);
  c.mixer.get<ember::GatedAttentionConfig>().gate = ember::Gate::headwise;
  EXPECT_DOUBLE_EQ(ember::estimate_training_memory(c, o).activations_per_block_token, plain + 4 * 64 + 4 * 4);
}

TEST(MemoryEstimate, TheLossChunkFollowsTheDevicesBudget) {
  auto c = estimate_model();
  c.vocab_size = 200376;
  ember::MemoryOptions o;
  o.micro_batch = 8, o.seq_len = 2048;  // 16384 rows: 50 chunks of 328 on a CPU, 4 of 4096 on a GPU
  const double N = 16384, d = 64, V = 200376;
  // The fused pass: one chunk of logits in the matmul dtype, turned into their gradient in place.
  EXPECT_DOUBLE_EQ(ember::estimate_training_memory(c, o).loss, N * d * 4 + 4 * V * d + 328 * V * 4);
  o.precision = ember::Precision::bf16;  // bf16 logits in chunks of 328 rows, and the bf16 product
  EXPECT_DOUBLE_EQ(ember::estimate_training_memory(c, o).loss, N * d * 6 + 4 * V * d + 328 * V * 2 + V * d * 2);
  o.gpu = true;  // 10716 rows per 4 GiB: 2 chunks of 8192, the bf16 product straight into fp32
  EXPECT_DOUBLE_EQ(ember::estimate_training_memory(c, o).loss, N * d * 6 + 4 * V * d + 8192 * V * 2);
  o.precision = ember::Precision::fp32;
  EXPECT_DOUBLE_EQ(ember::estimate_training_memory(c, o).loss, N * d * 4 + 4 * V * d + 4096 * V * 4);
  // The ATen pass (kernels.loss_head = aten): fp32 logits, their softmax and the low-precision copy.
  const ember::testing::ScopedFusion aten_head(ember::kernels::Op::loss_head, false);
  EXPECT_DOUBLE_EQ(ember::estimate_training_memory(c, o).loss, N * d * 4 + 4 * V * d + 4096 * V * 12);
  o.gpu = false;
  EXPECT_DOUBLE_EQ(ember::estimate_training_memory(c, o).loss, N * d * 4 + 4 * V * d + 328 * V * 12);
}
