// AdamW against the closed-form step, parameter groups, schedules at key steps, clipping.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <set>

#include "ember/model/init.h"
#include "ember/model/lev.h"
#include "ember/model/lm.h"
#include "ember/train/adamw.h"
#include "ember/train/lr_schedule.h"

using ember::LrSchedule;
using ember::OptimConfig;

TEST(AdamW, FirstStepMatchesClosedForm) {
  OptimConfig cfg;
  cfg.beta1 = 0.9, cfg.beta2 = 0.95, cfg.eps = 1e-8, cfg.weight_decay = 0.1;
  auto w = torch::tensor({{1.0, -2.0}, {0.5, 3.0}}, torch::kDouble).requires_grad_();
  auto g = torch::tensor({{0.3, -0.1}, {2.0, 0.0}}, torch::kDouble);
  ember::AdamW opt({{"layers.0.w", w}}, cfg);
  w.mutable_grad() = g.clone();
  const double lr = 0.01;
  auto w0 = w.detach().clone();
  opt.step(lr);
  // m_hat = g, v_hat = g^2 after bias correction: w1 = w0 (1 - lr wd) - lr g / (|g| + eps)
  auto expect = w0 * (1 - lr * 0.1) - lr * g / (g.abs() + 1e-8);
  EXPECT_LT((w.detach() - expect).abs().max().item<double>(), 1e-12);
}

TEST(AdamW, SecondStepMatchesClosedForm) {
  OptimConfig cfg;
  cfg.beta1 = 0.8, cfg.beta2 = 0.9, cfg.eps = 1e-6, cfg.weight_decay = 0.0;
  auto w = torch::tensor({1.0, 2.0}, torch::kDouble).unsqueeze(0).requires_grad_();
  ember::AdamW opt({{"layers.0.w", w}}, cfg);
  auto g1 = torch::tensor({{0.5, -1.0}}, torch::kDouble), g2 = torch::tensor({{-0.2, 0.4}}, torch::kDouble);
  auto w0 = w.detach().clone();
  w.mutable_grad() = g1.clone();
  opt.step(0.1);
  w.mutable_grad() = g2.clone();
  opt.step(0.05);
  auto m1 = 0.2 * g1, v1 = 0.1 * g1 * g1;
  auto w1 = w0 - 0.1 * (m1 / 0.2) / ((v1 / 0.1).sqrt() + 1e-6);
  auto m2 = 0.8 * m1 + 0.2 * g2, v2 = 0.9 * v1 + 0.1 * g2 * g2;
  auto w2 = w1 - 0.05 * (m2 / (1 - 0.64)) / ((v2 / (1 - 0.81)).sqrt() + 1e-6);
  EXPECT_LT((w.detach() - w2).abs().max().item<double>(), 1e-12);
  EXPECT_EQ(opt.steps(), 2);
}

TEST(AdamW, NoDecayOnNormsBiasesAndEmbeddingsByDefault) {
  EXPECT_FALSE(ember::parameter_decays("final_norm.weight", torch::ones({4}), false));
  EXPECT_FALSE(ember::parameter_decays("layers.0.mlp.bias", torch::ones({4}), true));
  EXPECT_FALSE(ember::parameter_decays("embedding.weight", torch::ones({4, 4}), false));
  EXPECT_TRUE(ember::parameter_decays("embedding.weight", torch::ones({4, 4}), true));
  EXPECT_TRUE(ember::parameter_decays("layers.0.mixer.wq", torch::ones({4, 4}), false));
  // Biases and norm parameters of rank 2 do not decay either (Titans' gate biases, LEV's per-head
  // LayerNorm and knot scale), even with decay_embeddings; their matrices do.
  ember::ModelConfig c;
  c.vocab_size = 64, c.d_model = 32, c.n_layers = 1, c.n_heads = 2, c.mlp.d_ff = 64;
  c.mixer.kind = "titans";
  c.embedding.kind = "lev";
  c.embedding.get<ember::LevConfig>().learnable_knot_scale = true;
  ember::MetaInitScope meta;
  ember::LanguageModel m(c);
  std::set<std::string> decayed;
  for (const auto& item : m.named_parameters())
    if (ember::parameter_decays(item.key(), item.value(), true)) decayed.insert(item.key());
  for (std::string kept : {"layers.0.mixer.b_gates", "embedding.ln_weight", "embedding.ln_bias", "embedding.knot_scale",
                           "layers.0.mixer.out_norm.weight"})
    EXPECT_EQ(decayed.count(kept), 0u) << kept;
  for (std::string decays : {"layers.0.mixer.w_gates", "layers.0.mixer.wq", "embedding.seed_proj", "embedding.spline"})
    EXPECT_EQ(decayed.count(decays), 1u) << decays;
  // A no-decay parameter with zero gradient does not move at all.
  OptimConfig cfg;
  cfg.weight_decay = 0.5;
  auto gain = torch::ones({3}, torch::kDouble).requires_grad_();
  auto mat = torch::ones({3, 3}, torch::kDouble).requires_grad_();
  ember::AdamW opt({{"norm.weight", gain}, {"layers.0.w", mat}}, cfg);
  gain.mutable_grad() = torch::zeros_like(gain);
  mat.mutable_grad() = torch::zeros_like(mat);
  opt.step(0.1);
  EXPECT_TRUE(torch::equal(gain.detach(), torch::ones({3}, torch::kDouble)));
  EXPECT_NEAR(mat[0][0].item<double>(), 1.0 - 0.1 * 0.5, 1e-12);
}

TEST(AdamW, StateRoundTrip) {
  OptimConfig cfg;
  auto w = torch::randn({3, 2}).requires_grad_();
  ember::AdamW a({{"w", w}}, cfg);
  w.mutable_grad() = torch::randn({3, 2});
  a.step(0.01);
  auto state = a.state_tensors();
  auto w2 = w.detach().clone().requires_grad_();
  ember::AdamW b({{"w", w2}}, cfg);
  b.load_state_tensors(state, "test");
  auto g = torch::randn({3, 2});
  w.mutable_grad() = g.clone();
  w2.mutable_grad() = g.clone();
  a.step(0.01);
  b.step(0.01);
  EXPECT_TRUE(torch::equal(w.detach(), w2.detach()));
}

TEST(Schedule, KeyStepsOfEachKind) {
  OptimConfig c;
  c.lr = 1.0, c.min_lr = 0.1, c.warmup_steps = 10;
  const int64_t total = 110;  // the decay spans steps 10 .. 109, t = (step - 10) / 99
  for (auto kind : {LrSchedule::cosine, LrSchedule::linear, LrSchedule::constant, LrSchedule::wsd}) {
    c.schedule = kind;
    EXPECT_DOUBLE_EQ(ember::learning_rate(c, 0, total), 0.1) << ember::enum_name(kind);  // warmup (step+1)/W
    EXPECT_DOUBLE_EQ(ember::learning_rate(c, 4, total), 0.5) << ember::enum_name(kind);
    EXPECT_DOUBLE_EQ(ember::learning_rate(c, 10, total), 1.0) << ember::enum_name(kind);  // peak after warmup
  }
  c.schedule = LrSchedule::cosine;  // t = 1/3: 0.1 + 0.9 (1 + cos(pi/3)) / 2 = 0.775
  EXPECT_NEAR(ember::learning_rate(c, 10 + 33, total), 0.1 + 0.9 * 0.5 * (1.0 + std::cos(M_PI / 3)), 1e-12);
  EXPECT_NEAR(ember::learning_rate(c, 10 + 66, total), 0.1 + 0.9 * 0.5 * (1.0 + std::cos(2 * M_PI / 3)), 1e-12);
  EXPECT_NEAR(ember::learning_rate(c, total - 1, total), 0.1, 1e-12);
  c.schedule = LrSchedule::linear;
  EXPECT_NEAR(ember::learning_rate(c, 10 + 33, total), 1.0 - 0.9 * 33.0 / 99.0, 1e-12);
  EXPECT_NEAR(ember::learning_rate(c, total - 1, total), 0.1, 1e-12);
  c.schedule = LrSchedule::constant;
  EXPECT_DOUBLE_EQ(ember::learning_rate(c, total - 1, total), 1.0);
  c.schedule = LrSchedule::wsd;  // decay over the last round(0.2 x 110) = 22 steps: 88 .. 109
  c.decay_fraction = 0.2;
  EXPECT_DOUBLE_EQ(ember::learning_rate(c, 60, total), 1.0);
  EXPECT_DOUBLE_EQ(ember::learning_rate(c, 87, total), 1.0);                 // the last stable step
  EXPECT_NEAR(ember::learning_rate(c, 88, total), 1.0 - 0.9 / 22.0, 1e-12);  // the first decayed step
  EXPECT_NEAR(ember::learning_rate(c, 98, total), 1.0 - 0.9 * 11.0 / 22.0, 1e-12);
  EXPECT_NEAR(ember::learning_rate(c, total - 1, total), 0.1, 1e-12);
}

// step(lr, c) scales the gradients inside the fused pass: the same state as scaling them first.
// Adam's update is nearly scale-invariant, so the moments (linear in c) and a large eps make the
// scale visible in the comparison.
TEST(AdamW, GradScaleEqualsScalingTheGradientsFirst) {
  OptimConfig cfg;
  cfg.eps = 0.5, cfg.weight_decay = 0.1;
  torch::manual_seed(3);
  auto init = torch::randn({3, 4}, torch::kDouble);
  auto a = init.clone().requires_grad_(), b = init.clone().requires_grad_(), plain = init.clone().requires_grad_();
  ember::AdamW oa({{"layers.0.w", a}}, cfg), ob({{"layers.0.w", b}}, cfg), op({{"layers.0.w", plain}}, cfg);
  for (double c : {0.25, 0.6}) {
    auto g = torch::randn({3, 4}, torch::kDouble);
    a.mutable_grad() = g * c;
    oa.step(0.01);
    b.mutable_grad() = g.clone();
    ob.step(0.01, c);
    plain.mutable_grad() = g.clone();
    op.step(0.01);
  }
  // 1e-7: the kernel reads the divisor 1 / c as a float
  EXPECT_LT((a.detach() - b.detach()).abs().max().item<double>(), 1e-7);
  const auto sa = oa.state_tensors(), sb = ob.state_tensors(), sp = op.state_tensors();
  for (const char* key : {"exp_avg/layers.0.w", "exp_avg_sq/layers.0.w"}) {
    EXPECT_LT((sa.at(key) - sb.at(key)).abs().max().item<double>(), 1e-7) << key;
    EXPECT_GT((sp.at(key) - sb.at(key)).abs().max().item<double>(), 1e-3) << key << ": the scale was ignored";
  }
  EXPECT_GT((plain.detach() - b.detach()).abs().max().item<double>(), 1e-5);
}

TEST(AdamW, StateLivesOnTheParametersDevice) {
  // `_fused_adamw_` checks that every tensor it is given, step counters included, shares the
  // parameters' device: a CPU counter beside CUDA parameters fails the first step on a GPU.
  auto w = torch::empty({3, 4}, torch::TensorOptions().device(torch::kMeta).requires_grad(true));
  ember::AdamW opt({{"layers.0.w", w}}, OptimConfig{});
  for (const auto& [key, t] : opt.state_tensors()) {
    if (key != "__steps__") {
      EXPECT_TRUE(t.is_meta()) << key << " is on " << t.device();
    }
  }
}

TEST(Clip, Coefficient) {
  EXPECT_DOUBLE_EQ(ember::clip_coefficient(5.0, 1.0), 1.0 / (5.0 + 1e-6));
  EXPECT_EQ(ember::clip_coefficient(0.5, 1.0), 1.0);  // below the limit
  EXPECT_EQ(ember::clip_coefficient(5.0, 0.0), 1.0);  // clipping off
  EXPECT_EQ(ember::clip_coefficient(std::nan(""), 1.0), 1.0);
  EXPECT_EQ(ember::clip_coefficient(INFINITY, 1.0), 1.0);
}

TEST(Clip, GlobalNormAndScaling) {
  auto a = torch::zeros({2}).requires_grad_(), b = torch::zeros({1}).requires_grad_();
  a.mutable_grad() = torch::tensor({3.0f, 0.0f});
  b.mutable_grad() = torch::tensor({4.0f});
  EXPECT_NEAR(ember::clip_grad_norm({a, b}, 1.0), 5.0, 1e-6);
  EXPECT_NEAR(a.grad()[0].item<double>(), 0.6, 1e-5);
  EXPECT_NEAR(b.grad()[0].item<double>(), 0.8, 1e-5);
  EXPECT_NEAR(ember::clip_grad_norm({a, b}, 10.0), 1.0, 1e-5);  // below the limit: unchanged
  EXPECT_NEAR(a.grad()[0].item<double>(), 0.6, 1e-5);
}
