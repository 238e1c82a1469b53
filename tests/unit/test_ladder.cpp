// Ladders (experiment/ladder_*.h): the file's errors name the key, the plan derives shapes and steps
// from the rules, and the report's analysis warns of degenerate ladders (a member missing a size,
// fewer than 3 sizes, losses rising with size) and resolves a known gap.
#include <gtest/gtest.h>

#include <cmath>

#include "ember/experiment/ladder_plan.h"
#include "ember/experiment/ladder_report.h"
#include "ember/util/error.h"
#include "scratch.h"

namespace {

using ember::testing::scratch_dir;
using ember::testing::write_text;

std::string ladder_text(const std::filesystem::path& dir) {
  return "out: runs/l\nconfigs: [" + (dir / "base.yaml").string() + "]\n" + R"(sizes:
  - {d_model: 32, n_layers: 1}
  - {d_model: 64, n_layers: 2}
  - {params: 2.0e5, name: big}
rules: {head_dim: 16, d_ff_ratio: 2, aspect: 32}
tokens: {per_param: 2}
warmup: 0.1
members:
  - {name: tied}
  - {name: untied, set: {model.embedding.kind: untied}}
seeds: [1, 2]
baseline: tied
)";
}

std::string error_of(const std::filesystem::path& dir, const std::string& text) {
  try {
    ember::plan_ladder(ember::load_ladder(write_text(dir, "bad.yaml", text).string()));
  } catch (const ember::Error& e) {
    return e.what();
  }
  return "";
}

// A ladder of `member` laws (offset from the first) at sizes 1e5 .. 1e7, seeds 1-3, 0.5% noise.
ember::LadderData synthetic(const std::vector<double>& offsets, size_t sizes = 5) {
  ember::LadderData d;
  d.target_n = 1e9, d.target = "1e9";
  for (size_t m = 0; m < offsets.size(); ++m) d.members.push_back("m" + std::to_string(m));
  uint64_t state = 1;
  for (size_t s = 0; s < sizes; ++s) {
    const double n = 1e5 * std::pow(100.0, static_cast<double>(s) / static_cast<double>(sizes - 1));
    d.sizes.push_back("s" + std::to_string(s)), d.size_n.push_back(n);
    for (size_t m = 0; m < offsets.size(); ++m)
      for (int64_t seed = 1; seed <= 3; ++seed) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        const double noise = 0.005 * (static_cast<double>(state >> 11) / 9007199254740992.0 - 0.5) * 3.46;
        d.points.push_back({m, s, seed, n, (1.8 + offsets[m] + 54.0 * std::pow(n, -0.3)) * std::exp(noise)});
      }
  }
  return d;
}

bool warned(const ember::LadderReport& r, const std::string& what) {
  for (const auto& w : r.warnings)
    if (w.find(what) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST(Ladder, PlanDerivesShapesStepsAndOneRunPerMemberSizeAndSeed) {
  const auto dir = scratch_dir("ladder", "plan");
  write_text(dir, "base.yaml", R"(
model: {vocab_size: 64, d_model: 64, n_layers: 2, n_heads: 4, max_seq_len: 64, mlp: {d_ff: 128}}
train: {steps: 60, micro_batch: 4, seq_len: 32, seed: 5}
optim: {warmup_steps: 2}
)");
  const auto file = write_text(dir, "l.yaml", ladder_text(dir));
  const auto plan = ember::plan_ladder(ember::load_ladder(file.string()));
  ASSERT_EQ(plan.entries.size(), 6u);
  ASSERT_EQ(plan.runs.size(), 12u);
  EXPECT_EQ(plan.runs[0].name, "tied_d32l1_seed1");
  EXPECT_EQ(plan.runs[3].name, "untied_d32l1_seed2");
  EXPECT_EQ(plan.run_seed[3], 2);
  const auto& e = plan.entries[2];  // tied at d64l2
  EXPECT_EQ(e.shape.n_heads, 4);    // 64 / head_dim 16
  EXPECT_EQ(e.shape.d_ff, 128);     // 2 x 64
  EXPECT_EQ(e.steps, std::llround(2 * e.n / 128));  // 2 tokens per parameter over 4 x 32 tokens a step
  EXPECT_EQ(plan.entries[3].n, e.n);                // untied: the same body
  EXPECT_GT(plan.entries[3].params_total, e.params_total);
  const auto& big = plan.entries[4];  // the target: nearest of the shapes d = 16k, n_layers = round(d / 32)
  EXPECT_LT(std::abs(std::log(big.n / 2e5)), std::log(2.0));
  EXPECT_EQ(big.shape.n_layers, std::llround(big.shape.d_model / 32.0));
  EXPECT_EQ(plan.target_n, e.n);  // by default the largest config beside base.yaml: itself, the shape of d64l2
}

TEST(Ladder, BadFilesAreErrorsNamingTheKey) {
  const auto dir = scratch_dir("ladder", "bad");
  write_text(dir, "base.yaml", "model: {vocab_size: 64, d_model: 64, n_layers: 2, n_heads: 4}\n");
  const std::string ok = ladder_text(dir);
  auto with = [&](const std::string& from, const std::string& to) {
    auto s = ok;
    s.replace(s.find(from), from.size(), to);
    return s;
  };

  EXPECT_NE(error_of(dir, with("  - {params: 2.0e5, name: big}\n", "")).find("sizes: a ladder needs at least 3 sizes"),
            std::string::npos);
  EXPECT_NE(error_of(dir, with("tokens: {per_param: 2}", "tokens: {per_parm: 2}")).find("tokens.per_parm: unknown key (did you mean 'per_param'?)"),
            std::string::npos);
  EXPECT_NE(error_of(dir, with("{d_model: 32, n_layers: 1}", "{d_model: 40, n_layers: 1}")).find("sizes[0].d_model: 40 is not a multiple"),
            std::string::npos);
  EXPECT_NE(error_of(dir, with("{params: 2.0e5, name: big}", "{params: 2.0e5, d_model: 64}")).find("sizes[2]: give either params"),
            std::string::npos);
  EXPECT_NE(error_of(dir, with("baseline: tied", "baseline: tide")).find("baseline: no member named 'tide'"),
            std::string::npos);
  EXPECT_NE(error_of(dir, with("model.embedding.kind: untied", "model.embedding.kind: nope")).find("member 'untied' at size 'd32l1'"),
            std::string::npos);
}

TEST(Ladder, AnalysisResolvesAKnownGapAndFlagsTheTargetAsExtrapolation) {
  ember::LadderData d = synthetic({0.0, -0.05});
  const auto r = ember::analyse_ladder(d, {200, 0, 1e-3});
  ASSERT_TRUE(r.fits[0].fitted && r.fits[1].fitted);
  EXPECT_TRUE(r.warnings.empty()) << r.warnings.front();
  ASSERT_EQ(r.gaps.size(), 6u);  // five sizes and the target
  for (const auto& g : r.gaps) {
    EXPECT_TRUE(g.interval.holds(-0.05)) << g.size;
    EXPECT_EQ(g.extrapolated, g.size == "target");
  }
  EXPECT_TRUE(r.gaps[2].resolved);
  EXPECT_EQ(r.gaps[2].observed.seeds.size(), 3u);
  EXPECT_NE(ember::ladder_markdown(r).find("**extrapolated**"), std::string::npos);
}

TEST(Ladder, DegenerateLaddersWarnOrFail) {
  auto missing = synthetic({0.0, 0.1});  // member m1 lacks size s2
  std::erase_if(missing.points, [](const ember::ScalingObservation& p) { return p.member == 1 && p.size == 2; });
  auto r = ember::analyse_ladder(missing, {50, 0, 1e-3});
  EXPECT_TRUE(warned(r, "member 'm1' has no finished run at size(s) s2: its fit uses the others"));
  EXPECT_TRUE(r.fits[1].fitted);

  auto few = synthetic({0.0, 0.1});  // m1 at two sizes only
  std::erase_if(few.points, [](const ember::ScalingObservation& p) { return p.member == 1 && p.size > 1; });
  r = ember::analyse_ladder(few, {50, 0, 1e-3});
  EXPECT_TRUE(warned(r, "member 'm1' is not fitted: finished runs at 2 size(s); a fit needs 3"));
  EXPECT_TRUE(r.gaps.empty());

  auto rising = synthetic({0.0});
  for (auto& p : rising.points) p.loss = 2.0 + 1e-3 * std::log(p.n);
  EXPECT_THROW(ember::analyse_ladder(rising, {50, 0, 1e-3}), ember::UsageError);
  rising.members.push_back("fine");
  for (const auto& p : synthetic({0.0}).points) rising.points.push_back({1, p.size, p.seed, p.n, p.loss});
  r = ember::analyse_ladder(rising, {50, 0, 1e-3});
  EXPECT_TRUE(warned(r, "member 'm0' is not fitted: its losses do not fall with size"));
  EXPECT_TRUE(warned(r, "the baseline 'm0' is not fitted: no gaps"));
}
