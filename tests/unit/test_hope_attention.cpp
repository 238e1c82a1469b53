// Hope-attention with a static CMS (model/mixers/hope_attention.h, model/block.h): k = 1 is the
// Transformer block bit for bit; k levels are the explicit chain; the levels split each layer's
// (tapered) MLP width exactly, so only the k - 1 extra norm gains are added.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "ember/model/block.h"
#include "ember/model/lm.h"
#include "ember/model/mixers/hope_attention/hope_attention.h"
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
  EXPECT_EQ(ember::cms_level_widths(50, 4), (std::vector<int64_t>{13, 13, 12, 12}));
  EXPECT_EQ(ember::cms_level_widths(48, 4), (std::vector<int64_t>{12, 12, 12, 12}));
  for (auto schedule : {ember::TaperSchedule::uniform, ember::TaperSchedule::cosine}) {
    auto attention = model("attention", 1), hope = model("hope_attention", 4);
    attention.mlp.taper.schedule = hope.mlp.taper.schedule = schedule;
    ember::LanguageModel a(attention), h(hope);
    const auto widths = attention.layer_d_ff();
    for (size_t l = 0; l < widths.size(); ++l) {
      EXPECT_EQ(h.blocks()[l]->mlp_width(), widths[l]);
      EXPECT_EQ(h.blocks()[l]->mlps().size(), 4u);
      EXPECT_EQ(h.blocks()[l]->mlps()[0]->d_ff(), ember::cms_level_widths(widths[l], 4)[0]);
    }
    EXPECT_EQ(h.num_parameters() - a.num_parameters(), 3 * 3 * 32);  // 3 layers x 3 extra norms of d
  }
}

TEST(HopeAttention, MoreLevelsThanWidthIsAnErrorNamingTheKey) {
  try {
    ember::cms_level_widths(3, 4);
    FAIL() << "4 levels over a width of 3 accepted";
  } catch (const ember::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("model.mixer.hope_attention.levels = 4"), std::string::npos) << e.what();
  }
}
