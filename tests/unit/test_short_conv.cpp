// Mixer kind short_conv (docs/mixers.md; the worked example of docs/extending.md): the convolution
// against an explicit loop in float64, causality and locality (token t reads only t-k+1 .. t), the
// config section reaching the module, and a kernel of 1 mixing nothing.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "ember/run/run_config.h"
#include "ember/model/lm.h"
#include "ember/model/mixer_registry.h"
#include "ember/model/mixers/short_conv.h"

namespace {

ember::ModelConfig conv_config(int64_t kernel) {
  ember::ModelConfig c;
  c.vocab_size = 40, c.d_model = 16, c.n_layers = 2, c.n_heads = 2, c.max_seq_len = 32, c.mlp.d_ff = 32;
  c.mixer.kind = "short_conv";
  c.mixer.get<ember::ShortConvConfig>().kernel = kernel;
  return c;
}

std::shared_ptr<ember::ShortConv> conv_of(const ember::ModelConfig& c) {
  return std::dynamic_pointer_cast<ember::ShortConv>(ember::make_mixer(ember::mixer_context(c, 0)));
}

}  // namespace

TEST(ShortConv, ConvolutionEqualsTheExplicitSumOverPastTokens) {
  torch::manual_seed(1);
  auto u = torch::randn({2, 9, 5}, torch::kDouble), taps = torch::randn({5, 3}, torch::kDouble);
  auto c = ember::causal_depthwise_conv(u, taps);
  auto want = torch::zeros_like(u);
  for (int64_t t = 0; t < 9; ++t)
    for (int64_t m = 0; m < 3 && m <= t; ++m)
      want.select(1, t) += taps.select(1, 2 - m) * u.select(1, t - m);  // the last tap on the current token
  EXPECT_LT((c - want).abs().max().item<double>(), 1e-12);
}

TEST(ShortConv, OutputsDependOnlyOnTheLastKTokens) {
  torch::manual_seed(2);
  auto m = conv_of(conv_config(3));
  ASSERT_TRUE(m);
  torch::NoGradGuard ng;
  ember::Rope rope(8, 32, 10000.0);
  auto x = torch::randn({2, 12, 16});
  auto base = m->forward(x, rope);
  const int64_t j = 5;
  auto changed = x.clone();
  changed.select(1, j).add_(1.0);
  auto out = m->forward(changed, rope);
  EXPECT_TRUE(torch::equal(out.narrow(1, 0, j), base.narrow(1, 0, j)));   // causal
  EXPECT_FALSE(torch::equal(out.narrow(1, j, 3), base.narrow(1, j, 3)));  // t = j .. j+2 read x_j
  EXPECT_TRUE(torch::equal(out.narrow(1, j + 3, 12 - j - 3), base.narrow(1, j + 3, 12 - j - 3)));  // local
}

TEST(ShortConv, TheConfigSectionReachesTheModule) {
  auto cfg = ember::load_config({}, {"model.mixer.kind=short_conv", "model.mixer.short_conv.kernel=7"});
  EXPECT_EQ(cfg.model.mixer.get<ember::ShortConvConfig>().kernel, 7);
  EXPECT_EQ(conv_of(cfg.model)->taps().sizes(), (std::vector<int64_t>{cfg.model.d_model, 7}));
  EXPECT_NE(ember::to_yaml(cfg).find("short_conv:\n      kernel: 7"), std::string::npos) << ember::to_yaml(cfg);
  try {
    ember::load_config({}, {"model.mixer.kind=short_conv", "model.mixer.short_conv.kernel=0"});
    FAIL() << "kernel 0 accepted";
  } catch (const ember::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("model.mixer.short_conv.kernel: expected a value > 0, got 0"),
              std::string::npos)
        << e.what();
  }
}

TEST(ShortConv, KernelOneMixesNothingAndTheModelTrains) {
  torch::manual_seed(3);
  ember::LanguageModel m(conv_config(1));
  auto ids = torch::randint(0, 40, {2, 10}, torch::kLong);
  {
    torch::NoGradGuard ng;
    auto base = m.forward(ids);
    auto changed = ids.clone();
    changed[0][4] = (changed[0][4] + 1) % 40;
    auto out = m.forward(changed);
    EXPECT_TRUE(torch::equal(out.narrow(1, 5, 5), base.narrow(1, 5, 5)));  // no token reads another
  }
  auto loss = m.loss(ids, ids);
  loss.backward();
  EXPECT_GT(m.named_parameters()["layers.0.mixer.taps"].grad().abs().sum().item<double>(), 0.0);
}
