// Tapered MLP widths: the spec's width lists, exact budget for every schedule, monotonicity,
// and errors that name the values.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <numeric>

#include "ember/model/init.h"
#include "ember/model/lm.h"
#include "ember/model/taper.h"
#include "ember/util/error.h"

using ember::TaperConfig;

namespace {

TaperConfig schedule(const std::string& name) {
  TaperConfig t;
  EXPECT_TRUE(ember::enum_from_name(name, t.schedule)) << name;
  return t;
}

int64_t sum(const std::vector<int64_t>& v) { return std::accumulate(v.begin(), v.end(), int64_t{0}); }

std::string error_of(const TaperConfig& t, int64_t L, int64_t d) {
  try {
    ember::taper_widths(t, L, d);
  } catch (const ember::ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Taper, SpecWidthListL24) {
  auto w = ember::taper_widths(schedule("cosine"), 24, 2048);
  ASSERT_EQ(w.size(), 24u);
  EXPECT_EQ(std::vector<int64_t>(w.begin(), w.begin() + 3), (std::vector<int64_t>{3072, 3056, 3040}));
  EXPECT_EQ(std::vector<int64_t>(w.end() - 2, w.end()), (std::vector<int64_t>{1040, 1024}));
  EXPECT_EQ(sum(w), 49152);
}

TEST(Taper, SpecWidthListL12) {
  EXPECT_EQ(ember::taper_widths(schedule("cosine"), 12, 3072),
            (std::vector<int64_t>{4608, 4544, 4368, 4080, 3712, 3296, 2848, 2432, 2064, 1776, 1600, 1536}));
}

TEST(Taper, ProfilesHaveTheSpecShape) {
  for (std::string s : {"linear", "cosine", "sigmoid"}) {
    auto t = schedule(s);
    EXPECT_NEAR(ember::taper_profile(t, 0.0), 1.0, 1e-12) << s;
    EXPECT_NEAR(ember::taper_profile(t, 1.0), 0.0, 1e-12) << s;
    for (double x : {0.1, 0.3, 0.45})
      EXPECT_NEAR(ember::taper_profile(t, x) + ember::taper_profile(t, 1 - x), 1.0, 1e-12);
  }
  EXPECT_NEAR(ember::taper_profile(schedule("cosine"), 0.25), (1 + std::cos(M_PI / 4)) / 2, 1e-15);
}

// Off the symmetric points each profile is its own curve: linear 1 - t, and the sigmoid of the
// spec with its steepness k (written out here; k = 4 and 10 differ).
TEST(Taper, LinearAndSigmoidProfilesAtAQuarter) {
  EXPECT_NEAR(ember::taper_profile(schedule("linear"), 0.25), 0.75, 1e-15);
  auto s = [](double x) { return 1 / (1 + std::exp(-x)); };
  for (double k : {4.0, 10.0}) {
    auto t = schedule("sigmoid");
    t.steepness = k;
    const double want = (s(-k * (0.25 - 0.5)) - s(-k / 2)) / (s(k / 2) - s(-k / 2));
    EXPECT_NEAR(ember::taper_profile(t, 0.25), want, 1e-14) << "k " << k;
  }
  auto k4 = schedule("sigmoid");
  k4.steepness = 4;
  EXPECT_GT(std::abs(ember::taper_profile(k4, 0.25) - ember::taper_profile(schedule("sigmoid"), 0.25)), 0.05);
}

TEST(Taper, BudgetExactAndMonotoneForEveryScheduleAndParity) {
  for (std::string s : {"linear", "cosine", "sigmoid"}) {
    for (int64_t L : {2, 5, 8, 13, 24}) {
      auto w = ember::taper_widths(schedule(s), L, 512);
      EXPECT_EQ(sum(w), L * 512) << s << " L=" << L;
      EXPECT_EQ(w.front(), 768) << s;
      EXPECT_EQ(w.back(), 256) << s;
      for (size_t l = 1; l < w.size(); ++l) EXPECT_LE(w[l], w[l - 1]) << s << " L=" << L << " l=" << l;
      for (auto x : w) EXPECT_EQ(x % 16, 0);
    }
  }
}

// A pinned end off the q grid (1.25 x 1392 = 1740 with q = 16; 1.25 x 2816 = 3520 with q = 256)
// once let its neighbour round above it (1744, 3584), so widths rose with depth at both ends.
TEST(Taper, MonotoneWhenThePinnedEndsAreOffTheGrid) {
  struct Case {
    int64_t d_base, q;
  };
  for (auto [d_base, q] : {Case{1392, 16}, Case{2816, 256}, Case{3840, 128}}) {
    for (std::string s : {"linear", "cosine", "sigmoid"}) {
      for (double start : {1.25, 1.375, 1.625}) {
        auto t = schedule(s);
        t.start = start, t.end = 2 - start, t.multiple_of = q;
        for (int64_t L : {12, 21, 24, 48}) {
          auto w = ember::taper_widths(t, L, d_base);
          EXPECT_EQ(w.front(), std::llround(start * d_base));
          EXPECT_EQ(sum(w), L * d_base) << s << " L=" << L;
          for (size_t l = 1; l < w.size(); ++l)
            EXPECT_LE(w[l], w[l - 1]) << s << " start=" << start << " L=" << L << " q=" << q << " l=" << l;
        }
      }
    }
  }
}

TEST(Taper, GroupAllocations) {
  auto t = schedule("groups");
  EXPECT_EQ(ember::taper_widths(t, 6, 512), (std::vector<int64_t>{768, 768, 512, 512, 256, 256}));
  t.groups = {0.75, 1.5, 0.75};
  EXPECT_EQ(sum(ember::taper_widths(t, 9, 512)), 9 * 512);
  t.groups = {0.5, 1.0, 1.5};
  EXPECT_EQ(ember::taper_widths(t, 3, 512).back(), 768);
}

TEST(Taper, InconsistentSettingsNameTheValues) {
  auto t = schedule("cosine");
  t.start = 1.6;
  EXPECT_NE(error_of(t, 12, 512).find("start = 1.6 and end = 0.5 must sum to 2"), std::string::npos);
  EXPECT_NE(error_of(schedule("linear"), 12, 520).find("d_ff = 520 is not a multiple of 16"), std::string::npos);
  auto g = schedule("groups");
  EXPECT_NE(error_of(g, 8, 512).find("3 groups do not divide n_layers = 8"), std::string::npos);
  g.groups = {1.5, 1.0, 1.0};
  EXPECT_NE(error_of(g, 6, 512).find("average 1.16"), std::string::npos) << error_of(g, 6, 512);
  auto z = schedule("linear");
  z.start = 2.0, z.end = 0.0;
  EXPECT_NE(error_of(z, 4, 64).find("(<= 0)"), std::string::npos) << error_of(z, 4, 64);
}

TEST(Taper, EndWidthsArePinnedToStartAndEndTimesTheBaseWidth) {
  // round(1.5 x 1392) = 2088 and round(0.5 x 1392) = 696, though neither is a multiple of 16; the
  // interior is rounded to 16 and the total stays L x d_base.
  for (std::string s : {"linear", "cosine", "sigmoid"}) {
    auto w = ember::taper_widths(schedule(s), 8, 1392);
    EXPECT_EQ(w.front(), 2088) << s;
    EXPECT_EQ(w.back(), 696) << s;
    for (size_t l = 1; l + 1 < w.size(); ++l) EXPECT_EQ(w[l] % 16, 0) << s << " layer " << l;
    EXPECT_EQ(sum(w), 8 * 1392) << s;
  }
  auto coarse = schedule("cosine");
  coarse.multiple_of = 256;
  auto w = ember::taper_widths(coarse, 6, 2816);  // 1.5 x 2816 = 4224 is not a multiple of 256
  EXPECT_EQ(w.front(), 4224);
  EXPECT_EQ(w.back(), 1408);
  EXPECT_EQ(sum(w), 6 * 2816);
  auto two = ember::taper_widths(schedule("linear"), 2, 1392);
  EXPECT_EQ(two, (std::vector<int64_t>{2088, 696}));
}

TEST(Taper, TaperedModelHasExactlyTheUniformParameterCountAndFlops) {
  ember::ModelConfig c;
  c.vocab_size = 100, c.d_model = 64, c.n_heads = 4, c.mlp.d_ff = 192;
  for (int64_t L : {3, 6}) {
    c.n_layers = L;
    c.mlp.taper.schedule = ember::TaperSchedule::uniform;
    ember::MetaInitScope meta;
    ember::LanguageModel uniform(c);
    for (std::string s : {"linear", "cosine", "sigmoid", "groups"}) {
      c.mlp.taper.schedule = schedule(s).schedule;
      ember::LanguageModel tapered(c);
      EXPECT_EQ(tapered.num_parameters(), uniform.num_parameters()) << s << " L=" << L;
      EXPECT_EQ(tapered.train_flops_per_token(128), uniform.train_flops_per_token(128)) << s;
      EXPECT_NE(tapered.blocks()[0]->mlp().d_ff(), tapered.blocks()[L - 1]->mlp().d_ff()) << s;
    }
  }
}

TEST(Taper, MetaInitCreatesNoStorage) {
  ember::ModelConfig c;
  c.vocab_size = 128256, c.d_model = 2048, c.n_layers = 21, c.n_heads = 16, c.mlp.d_ff = 5376;
  ember::MetaInitScope meta;
  ember::LanguageModel m(c);
  EXPECT_TRUE(m.head_weight().is_meta());
  EXPECT_GT(m.num_parameters(), 1'300'000'000);
}
