// Hope-attention with a static CMS (model/mixers/hope_attention.h, model/mlps/cms/, model/block.h):
// k = 1 is the Transformer block bit for bit; k levels are the explicit chain; the levels split each
// layer's (tapered) MLP width exactly, so only the k - 1 extra norm gains are added; the preset is
// attention + model.mlp.kind cms, parameter for parameter and bit for bit.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "ember/model/block.h"
#include "ember/model/feed_forward_registry.h"
#include "ember/model/lm.h"
#include "ember/model/mixers/hope_attention.h"
#include "ember/run/run_config.h"
#include "ember/util/error.h"

namespace {

ember::ModelConfig model(const std::string& mixer, int64_t levels) {
  ember::ModelConfig c;
  c.vocab_size = 50, c.d_model = 32, c.n_layers = 3, c.n_heads = 4, c.max_seq_len = 32;
  c.mlp.d_ff = 48;
  c.mixer.kind = mixer;
  c.mixer.get<ember::HopeAttentionConfig>().levels = levels;
  return c;
}

}  // namespace

TEST(HopeAttention, OneStaticLevelIsTheTransformerBlockBitForBit) {
  torch::manual_seed(1);
  ember::LanguageModel transformer(model("attention", 1));
  ember::LanguageModel hope(model("hope_attention", 1));
  auto theirs = transformer.named_parameters();
  auto ours = hope.named_parameters();
  ASSERT_EQ(ours.size(), theirs.size());
  {
    torch::NoGradGuard no_grad;
    for (const auto& p : ours) p.value().copy_(theirs[p.key()]);  // same names, same shapes
  }
  auto ids = torch::randint(0, 50, {2, 11}, torch::kLong);
  EXPECT_TRUE(torch::equal(hope.forward(ids), transformer.forward(ids)));
}

TEST(HopeAttention, LevelsAreAChainOfResidualMlpsEachWithItsNorm) {
  torch::manual_seed(2);
  auto cfg = model("hope_attention", 3);
  auto block_ptr = std::make_shared<ember::Block>(cfg, 0, 50);
  auto& block = *block_ptr;
  ember::Rope rope(8, 32, 10000.0);
  auto x = torch::randn({2, 7, 32});
  auto named = block.named_modules();
  auto norm = [&](const std::string& n, const at::Tensor& v) {
    return named[n]->as<ember::RMSNorm>()->forward(v);
  };
  auto mlp = [&](const std::string& n, const at::Tensor& v) { return named[n]->as<ember::SwiGLU>()->forward(v); };
  auto h = x + block.mixer().forward(norm("mixer_norm", x), rope);
  for (std::string s : {"", "_1", "_2"}) h = h + mlp("mlp" + s, norm("mlp_norm" + s, h));
  EXPECT_LT((block.forward(x, rope) - h).abs().max().item<double>(), 1e-6);
  ASSERT_EQ(block.mlps().size(), 3u);
  EXPECT_EQ(block.mlp_width(), 50);
}

TEST(HopeAttention, LevelsSplitEveryTaperedWidthAtTheSameBudget) {
  EXPECT_EQ(ember::cms_level_widths(50, 4, "model.mlp.cms"), (std::vector<int64_t>{13, 13, 12, 12}));
  EXPECT_EQ(ember::cms_level_widths(48, 4, "model.mlp.cms"), (std::vector<int64_t>{12, 12, 12, 12}));
  for (auto schedule : {ember::TaperSchedule::uniform, ember::TaperSchedule::cosine}) {
    auto attention = model("attention", 1), hope = model("hope_attention", 4);
    attention.mlp.taper.schedule = hope.mlp.taper.schedule = schedule;
    ember::LanguageModel a(attention), h(hope);
    const auto widths = attention.layer_d_ff();
    for (size_t l = 0; l < widths.size(); ++l) {
      EXPECT_EQ(h.blocks()[l]->mlp_width(), widths[l]);
      EXPECT_EQ(h.blocks()[l]->mlps().size(), 4u);
      EXPECT_EQ(h.blocks()[l]->mlps()[0]->d_ff(), ember::cms_level_widths(widths[l], 4, "model.mlp.cms")[0]);
    }
    EXPECT_EQ(h.num_parameters() - a.num_parameters(), 3 * 3 * 32);  // 3 layers x 3 extra norms of d
  }
}

// The error names the key where the levels were set: the preset's section or model.mlp.cms.
TEST(HopeAttention, MoreLevelsThanWidthIsAnErrorNamingTheKey) {
  for (std::string mixer : {"hope_attention", "attention"}) {
    auto c = model(mixer, 1);
    c.mlp.d_ff = 3;
    c.mixer.get<ember::HopeAttentionConfig>().levels = 4;
    c.mlp.kind = mixer == "attention" ? "cms" : "swiglu";
    c.mlp.get<ember::CmsConfig>().levels = 4;
    const std::string key = mixer == "attention" ? "model.mlp.cms.levels = 4" : "model.mixer.hope_attention.levels = 4";
    try {
      ember::LanguageModel m(c);
      FAIL() << "4 levels over a width of 3 accepted";
    } catch (const ember::ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  }
}

namespace {

// hope_attention with `options`, and attention + model.mlp.kind cms with the same options.
std::pair<ember::ModelConfig, ember::ModelConfig> preset_and_explicit(const std::vector<std::string>& options) {
  std::vector<std::string> preset{"model.mixer.kind=hope_attention"}, explicit_{"model.mlp.kind=cms"};
  for (const auto& o : options) {
    preset.push_back("model.mixer.hope_attention." + o);
    explicit_.push_back("model.mlp.cms." + o);
  }
  const std::vector<std::string> size{"model.vocab_size=50", "model.d_model=32", "model.n_layers=2",
                                      "model.n_heads=4", "model.max_seq_len=32", "model.mlp.d_ff=48",
                                      "model.init_std=0.2", "train.seq_len=16"};
  preset.insert(preset.end(), size.begin(), size.end());
  explicit_.insert(explicit_.end(), size.begin(), size.end());
  return {ember::load_config({}, preset).model, ember::load_config({}, explicit_).model};
}

}  // namespace

// Hope-attention by configuration: the preset and attention + the cms feed-forward have the same
// parameters under the same names, and the same outputs and gradients, static or learning in context.
TEST(HopeAttention, ThePresetIsAttentionWithTheCmsFeedForward) {
  for (const auto& options : std::vector<std::vector<std::string>>{
           {"levels=3"},
           {"levels=2", "update=chunked", "chunk_sizes=[3, 0]", "inner_lr=0.05"},
           {"levels=2", "update=chunked", "chunk_sizes=[4, 2]", "signal=lens", "differentiate_updates=true"}}) {
    const auto [preset_cfg, explicit_cfg] = preset_and_explicit(options);
    EXPECT_EQ(ember::feed_forward_choice(preset_cfg).config.kind, "cms");
    EXPECT_EQ(ember::feed_forward_choice(preset_cfg).path, "model.mixer.hope_attention");
    torch::manual_seed(4);
    ember::LanguageModel preset(preset_cfg);
    torch::manual_seed(4);
    ember::LanguageModel explicit_model(explicit_cfg);
    auto ours = preset.named_parameters(), theirs = explicit_model.named_parameters();
    ASSERT_EQ(ours.size(), theirs.size());
    for (const auto& p : ours) EXPECT_TRUE(torch::equal(p.value(), theirs[p.key()])) << p.key();
    auto ids = torch::randint(0, 50, {2, 12}, torch::kLong), targets = torch::randint(0, 50, {2, 12}, torch::kLong);
    preset.loss(ids, targets).backward();
    explicit_model.loss(ids, targets).backward();
    EXPECT_TRUE(torch::equal(preset.forward(ids), explicit_model.forward(ids))) << options.front();
    for (const auto& p : ours) EXPECT_TRUE(torch::equal(p.value().grad(), theirs[p.key()].grad())) << p.key();
  }
}

TEST(HopeAttention, ThePresetRefusesAnotherFeedForward) {
  try {
    ember::load_config({}, {"model.mixer.kind=hope_attention", "model.mlp.kind=cms"});
    FAIL() << "hope_attention with model.mlp.kind=cms accepted";
  } catch (const ember::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("model.mlp.kind"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("model.mixer.kind: attention"), std::string::npos) << e.what();
  }
}
