// Titans MAG (memory as a gate): the windowed attention against a per-query softmax loop in
// float64, and with a window longer than the sequence against plain causal attention; decoding in
// pieces equals the forward (the window's cache trimmed as it goes); causality; the window matters
// exactly when it is shorter than the sequence; the outer gradient against central differences; the
// parameter count against its closed form.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "central_differences.h"
#include "ember/model/lm.h"
#include "ember/model/mixers/attention.h"
#include "ember/model/mixers/titans/titans.h"
#include "ember/model/mixers/titans/windowed_attention.h"
#include "test_helpers.h"

namespace {

ember::ModelConfig mag_model(int64_t window, int64_t persistent) {
  ember::ModelConfig c;
  c.vocab_size = 40, c.d_model = 16, c.n_layers = 2, c.n_heads = 2, c.max_seq_len = 32;
  c.mlp.d_ff = 24;
  c.mixer.kind = "titans";
  auto& o = c.mixer.get<ember::TitansConfig>();
  o.variant = ember::TitansVariant::mag, o.window = window, o.persistent_tokens = persistent;
  o.memory_expansion = 2, o.conv_kernel = 3, o.chunk_size = 3;
  return c;
}

// Query i sees key j iff pos_j <= pos_i and (pos_i - pos_j < window or pos_j < 0).
at::Tensor loop_reference(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const std::vector<int64_t>& qp,
                          const std::vector<int64_t>& kp, int64_t window) {
  auto out = torch::zeros_like(q);
  for (size_t i = 0; i < qp.size(); ++i) {
    std::vector<int64_t> seen;
    for (size_t j = 0; j < kp.size(); ++j)
      if (kp[j] <= qp[i] && (qp[i] - kp[j] < window || kp[j] < 0)) seen.push_back(static_cast<int64_t>(j));
    auto idx = torch::tensor(seen);
    auto scores = (q.select(2, static_cast<int64_t>(i)).unsqueeze(2) * k.index_select(2, idx)).sum(-1) /
                  std::sqrt(static_cast<double>(q.size(-1)));  // [B, H, |seen|]
    auto p = (scores - std::get<0>(scores.max(-1, true))).exp();
    p = p / p.sum(-1, true);
    out.select(2, static_cast<int64_t>(i)).copy_((p.unsqueeze(-1) * v.index_select(2, idx)).sum(2));
  }
  return out;
}

}  // namespace

TEST(WindowedAttention, EqualsAPerQuerySoftmaxLoop) {
  torch::manual_seed(1);
  std::vector<int64_t> pos = {-2, -1, 0, 1, 2, 3, 4, 5, 6};  // two persistent keys, then tokens
  auto q = torch::randn({2, 3, 9, 4}, ember::testing::kF64), k = torch::randn({2, 3, 9, 4}, ember::testing::kF64),
       v = torch::randn({2, 3, 9, 4}, ember::testing::kF64);
  auto p = torch::tensor(pos);
  for (int64_t window : {1, 3, 20}) {
    auto got = ember::windowed_attention(q, k, v, p, p, window);
    EXPECT_LT(ember::testing::max_abs_diff(got, loop_reference(q, k, v, pos, pos, window)), 1e-12) << window;
  }
  // Later queries against a trimmed cache: positions need not be contiguous.
  std::vector<int64_t> kp = {-2, -1, 4, 5, 6, 7}, qp = {6, 7};
  auto k2 = torch::randn({2, 3, 6, 4}, ember::testing::kF64), v2 = torch::randn({2, 3, 6, 4}, ember::testing::kF64),
       q2 = torch::randn({2, 3, 2, 4}, ember::testing::kF64);
  EXPECT_LT(ember::testing::max_abs_diff(ember::windowed_attention(q2, k2, v2, torch::tensor(qp), torch::tensor(kp), 3),
                                         loop_reference(q2, k2, v2, qp, kp, 3)),
            1e-12);
}

TEST(WindowedAttention, AWindowLongerThanTheSequenceIsCausalAttention) {
  torch::manual_seed(2);
  auto q = torch::randn({1, 2, 7, 4}, ember::testing::kF64), k = torch::randn({1, 2, 7, 4}, ember::testing::kF64),
       v = torch::randn({1, 2, 7, 4}, ember::testing::kF64);
  auto pos = torch::arange(7, torch::kLong);
  EXPECT_LT(ember::testing::max_abs_diff(ember::windowed_attention(q, k, v, pos, pos, 7),
                                         ember::Attention::reference_attention(q, k, v)),
            1e-12);
}

TEST(TitansMag, DecodingInPiecesEqualsTheForward) {
  torch::manual_seed(3);
  ember::LanguageModel m(mag_model(3, 2));
  m.to(torch::kDouble);
  torch::NoGradGuard no_grad;
  auto ids = torch::randint(0, 40, {2, 11}, torch::kLong);
  auto full = m.forward(ids);
  for (const std::vector<int64_t>& pieces : {std::vector<int64_t>(11, 1), {4, 2, 5}, {1, 9, 1}, {11}}) {
    ember::DecodeState state;
    std::vector<at::Tensor> parts;
    int64_t start = 0;
    for (int64_t n : pieces) parts.push_back(m.decode(ids.narrow(1, start, n), state)), start += n;
    EXPECT_LT(ember::testing::max_abs_diff(at::cat(parts, 1), full), 1e-10) << pieces.size();
  }
}

TEST(TitansMag, Causal) {
  torch::manual_seed(4);
  ember::LanguageModel m(mag_model(4, 2));
  torch::NoGradGuard no_grad;
  auto ids = torch::randint(0, 40, {1, 12}, torch::kLong);
  auto changed = ids.clone();
  changed[0][7] = (ids[0][7].item<int64_t>() + 1) % 40;
  auto a = m.forward(ids), b = m.forward(changed);
  EXPECT_TRUE(torch::equal(a.narrow(1, 0, 7), b.narrow(1, 0, 7)));
  EXPECT_GT(ember::testing::max_abs_diff(a.narrow(1, 7, 1), b.narrow(1, 7, 1)), 0.0);
}

TEST(TitansMag, TheWindowMattersOnlyWhenShorterThanTheSequence) {
  auto logits = [](int64_t window) {
    torch::manual_seed(5);
    ember::LanguageModel m(mag_model(window, 2));
    torch::NoGradGuard no_grad;
    return m.forward(torch::arange(12, torch::kLong).remainder(40).unsqueeze(0));
  };
  EXPECT_TRUE(torch::equal(logits(12), logits(30)));
  EXPECT_GT(ember::testing::max_abs_diff(logits(3), logits(30)), 1e-4);
}

TEST(TitansMag, OuterGradientsEqualCentralDifferences) {
  torch::manual_seed(6);
  auto cfg = mag_model(3, 2);
  cfg.mixer.get<ember::TitansConfig>().theta_bias = 1.0;
  ember::Titans mixer(ember::mixer_context(cfg, 0), cfg.mixer.get<ember::TitansConfig>());
  mixer.to(torch::kDouble);
  ember::Rope rope(16 / 2, 32, 10000.0);
  auto x = torch::randn({2, 7, 16}, ember::testing::kF64), weights = torch::randn({2, 7, 16}, ember::testing::kF64);
  auto loss_of = [&] { return (mixer.forward(x, rope) * weights).sum(); };
  ember::testing::expect_gradients_match_central_differences(
      mixer, loss_of, {"attn_wq", "attn_wk", "attn_wv", "attn_norm.weight", "out_norm.weight", "w1", "persistent"});
}

TEST(TitansMag, ParameterCountEqualsTheClosedForm) {
  const int64_t d = 16, h = 2, dh = 8, L = 2, d_ff = 24, V = 40, expansion = 2, conv = 3, np = 2;
  ember::LanguageModel m(mag_model(3, np));
  const int64_t mixer = 4 * d * h * dh                 // W_Q, W_K, W_V of the memory, W_O
                        + 3 * d * h * dh               // the attention branch's W_Q, W_K, W_V
                        + 3 * h * dh * conv            // the three depthwise convolutions
                        + 3 * h * d + 3 * h            // theta, eta, alpha gates and biases
                        + 2 * h * dh * expansion * dh  // W1_0, W2_0 per head
                        + np * d + 2 * dh;             // persistent tokens, the two output norms' gains
  EXPECT_EQ(m.num_parameters(), V * d + L * (mixer + 3 * d * d_ff + 2 * d) + d);
}
