// Paired seed statistics of the report (experiment/paired_stats.h, paired_report.h, report.csv):
// Student t quantiles against published tables and closed forms, the paired interval on
// hand-computed examples, the common seeds of members with different seed sets, report.csv's
// rows read back and recomputed, and the figures' data (the paired-difference bars, pooled histograms).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>

#include "ember/experiment/multiple_comparisons.h"
#include "ember/experiment/paired_report.h"
#include "ember/experiment/paired_stats.h"
#include "ember/experiment/report_figures.h"
#include "ember/experiment/run_report.h"
#include "ember/util/error.h"
#include "ember/util/student_t.h"

namespace paired_stats_test {  // named: its helpers share a unity group with other tests'
namespace {

// A run of `member` with seed `seed`, its validation loss (perplexity exp of it), training loss and
// two frequency buckets.
ember::RunResult seeded_run(const std::string& member, int64_t seed, double val_loss, double rare_ppl = 30) {
  ember::RunResult r;
  r.group = member, r.seed = seed;
  r.dir = member + "_seed" + std::to_string(seed);
  r.val_loss = val_loss, r.val_ppl = std::exp(val_loss), r.train_loss = val_loss + 0.5;
  r.rare_ppl = rare_ppl, r.frequent_ppl = 3, r.rare_range = "1e-06 .. 1e-05";
  r.buckets = {{"1e-06 .. 1e-05", 40, rare_ppl}, {">= 1e-05", 60, 3}};
  return r;
}

// report.csv as rows of named cells (the test's names hold no comma or quote).
std::vector<std::map<std::string, std::string>> read_csv(const std::string& text) {
  auto split = [](const std::string& line) {
    std::vector<std::string> cells;
    std::stringstream in(line);
    for (std::string c; std::getline(in, c, ',');) cells.push_back(c);
    if (!line.empty() && line.back() == ',') cells.emplace_back();
    return cells;
  };
  std::stringstream in(text);
  std::string line;
  std::getline(in, line);
  const auto names = split(line);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    const auto cells = split(line);
    EXPECT_EQ(cells.size(), names.size()) << line;
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < names.size() && i < cells.size(); ++i) row[names[i]] = cells[i];
    rows.push_back(row);
  }
  return rows;
}

TEST(StudentT, QuantilesMatchTheTablesAndTheClosedForms) {
  const std::pair<double, double> table[] = {{1, 12.7062047}, {2, 4.30265273}, {4, 2.77644511},
                                             {9, 2.26215716}, {29, 2.04522964}, {1000, 1.96233908}};
  for (const auto& [df, t] : table) EXPECT_NEAR(ember::student_t_quantile(0.975, df), t, 1e-7) << "df " << df;
  for (double p : {0.6, 0.9, 0.995, 0.9999}) {
    EXPECT_NEAR(ember::student_t_quantile(p, 1), std::tan(M_PI * (p - 0.5)), 1e-9 * std::tan(M_PI * (p - 0.5)));
    EXPECT_NEAR(ember::student_t_quantile(p, 2), (2 * p - 1) / std::sqrt(2 * p * (1 - p)), 1e-9);  // df 2
    EXPECT_NEAR(ember::student_t_quantile(1 - p, 7), -ember::student_t_quantile(p, 7), 1e-12);  // symmetric
    EXPECT_NEAR(ember::student_t_cdf(ember::student_t_quantile(p, 3.5), 3.5), p, 1e-12);
  }
  EXPECT_EQ(ember::student_t_quantile(0.5, 5), 0.0);
  EXPECT_NEAR(ember::student_t_cdf(1, 1), 0.75, 1e-15);  // 1/2 + atan(1)/pi
  // I_x(a, 1) = x^a, I_x(1, b) = 1 - (1 - x)^b
  EXPECT_NEAR(ember::regularized_incomplete_beta(3, 1, 0.4), std::pow(0.4, 3), 1e-14);
  EXPECT_NEAR(ember::regularized_incomplete_beta(1, 2.5, 0.7), 1 - std::pow(0.3, 2.5), 1e-14);
  EXPECT_THROW(ember::student_t_quantile(1.0, 3), ember::UsageError);
  EXPECT_THROW(ember::student_t_quantile(0.9, 0), ember::UsageError);
  EXPECT_THROW(ember::regularized_incomplete_beta(1, 1, 1.5), ember::UsageError);
}

TEST(PairedStats, AnIntervalThatContainsZeroIsNotResolved) {
  const auto p = ember::paired_difference({1, 2, 3}, {-0.228, -0.005, -0.114});
  EXPECT_NEAR(p.mean, -0.11566667, 1e-8);
  EXPECT_NEAR(p.sd, 0.11150934, 1e-8);
  // half-width t_{0.975, 2} sd / sqrt(3) = 4.30265 * 0.11151 / 1.73205 = 0.27700
  EXPECT_NEAR(p.ci_low, -0.39267123, 1e-7);
  EXPECT_NEAR(p.ci_high, 0.16133789, 1e-7);
  EXPECT_EQ(p.sign_agree, 3);
  EXPECT_FALSE(p.resolved);
}

TEST(PairedStats, AnIntervalThatExcludesZeroIsResolved) {
  const auto p = ember::paired_difference({1, 2, 3, 4}, {-0.10, -0.12, -0.11, -0.09});
  EXPECT_NEAR(p.mean, -0.105, 1e-12);
  EXPECT_NEAR(p.ci_low, -0.12554260, 1e-7);  // t_{0.975, 3} = 3.18245
  EXPECT_NEAR(p.ci_high, -0.08445740, 1e-7);
  EXPECT_EQ(p.sign_agree, 4);
  EXPECT_TRUE(p.resolved);
  const auto mixed = ember::paired_difference({1, 2, 3}, {0.3, 0.4, -0.05});
  EXPECT_EQ(mixed.sign_agree, 2);
}

TEST(PairedStats, OneSeedHasNoIntervalAndZeroSpreadIsThePoint) {
  const auto one = ember::paired_difference({5}, {-0.3});
  EXPECT_TRUE(std::isnan(one.ci_low) && std::isnan(one.ci_high) && std::isnan(one.sd));
  EXPECT_EQ(one.mean, -0.3);
  EXPECT_FALSE(one.resolved);
  const auto flat = ember::paired_difference({1, 2}, {0.05, 0.05});
  EXPECT_NEAR(flat.ci_low, 0.05, 1e-15);
  EXPECT_NEAR(flat.ci_high, 0.05, 1e-15);
  EXPECT_TRUE(flat.resolved);
  EXPECT_FALSE(ember::paired_difference({1, 2}, {0.0, 0.0}).resolved);
  EXPECT_THROW(ember::paired_difference({1, 2}, {0.1}), ember::UsageError);
}

TEST(PairedStats, PValuesAreThePairedTTestAndAgreeWithTheInterval) {
  // df 2: P(|T| > t) = 1 - t / sqrt(2 + t^2); diffs 1, 2, 3 give t = 2 / (1 / sqrt(3)) = sqrt(12)
  EXPECT_NEAR(ember::paired_difference({1, 2, 3}, {1, 2, 3}).p, 1 - std::sqrt(12.0 / 14.0), 1e-12);
  // df 1: P(|T| > t) = 1 - 2 atan(t) / pi; diffs -0.2, -0.05 give t = 0.125 / 0.075
  EXPECT_NEAR(ember::paired_difference({2, 3}, {-0.2, -0.05}).p, 1 - 2 * std::atan(0.125 / 0.075) / M_PI, 1e-12);
  for (const auto& diffs : std::vector<std::vector<double>>{{-0.228, -0.005, -0.114}, {-0.10, -0.12, -0.11}}) {
    const auto p = ember::paired_difference({1, 2, 3}, diffs);
    EXPECT_EQ(p.p < 0.05, p.resolved) << p.p;
    EXPECT_EQ(p.p_adjusted, p.p);  // until a report corrects it
  }
  EXPECT_EQ(ember::paired_difference({1, 2}, {0.05, 0.05}).p, 0.0);
  EXPECT_EQ(ember::paired_difference({1, 2}, {0.0, 0.0}).p, 1.0);
  EXPECT_TRUE(std::isnan(ember::paired_difference({5}, {-0.3}).p));
}

// Holm (1979) and Bonferroni by hand: p = 0.01, 0.04, 0.03, 0.005 and one comparison without a test.
TEST(MultipleComparisons, HolmAndBonferroniByHand) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> p = {0.01, 0.04, 0.03, 0.005, nan};
  // sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1: 0.02, 0.03, 0.06, 0.04, then non-decreasing
  const auto holm = ember::adjust_p_values(p, ember::Correction::holm);
  const std::vector<double> want_holm = {0.03, 0.06, 0.06, 0.02};
  const auto bonf = ember::adjust_p_values(p, ember::Correction::bonferroni);
  const std::vector<double> want_bonf = {0.04, 0.16, 0.12, 0.02};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_NEAR(holm[i], want_holm[i], 1e-15) << i;
    EXPECT_NEAR(bonf[i], want_bonf[i], 1e-15) << i;
    EXPECT_LE(holm[i], bonf[i]);  // Holm is never weaker
  }
  EXPECT_TRUE(std::isnan(holm[4]) && std::isnan(bonf[4]));
  EXPECT_EQ(ember::adjust_p_values(p, ember::Correction::none)[2], 0.03);
  EXPECT_EQ(ember::adjust_p_values({0.5, 0.6}, ember::Correction::holm), (std::vector<double>{1.0, 1.0}));
  EXPECT_EQ(ember::adjust_p_values({0.5, 0.6}, ember::Correction::bonferroni), (std::vector<double>{1.0, 1.0}));
  EXPECT_EQ(ember::adjust_p_values({0.02}, ember::Correction::holm), (std::vector<double>{0.02}));  // one test
}

// Three members each 2.6% from the baseline alone (p 0.0262, t = 0.14 / (0.04 / sqrt(3)), 2 df): each
// interval excludes 0, but corrected for three comparisons none passes 0.05.
TEST(PairedReport, SeveralMembersAreCorrectedTogetherAndTheReportSaysSo) {
  std::vector<ember::RunResult> runs = {seeded_run("base", 1, 2.0), seeded_run("base", 2, 2.1),
                                        seeded_run("base", 3, 2.2)};
  for (const char* m : {"a", "b", "c"})
    for (const auto& [seed, loss] : std::vector<std::pair<int64_t, double>>{{1, 1.9}, {2, 1.96}, {3, 2.02}})
      runs.push_back(seeded_run(m, seed, loss));
  const double p1 = 1 - 0.14 / (0.04 / std::sqrt(3.0)) / std::sqrt(2 + std::pow(0.14 / (0.04 / std::sqrt(3.0)), 2));
  const auto holm = ember::make_report(runs, "base");
  for (size_t i = 1; i < 4; ++i) {
    const auto& d = holm.rows[i].paired.at("val_loss");
    EXPECT_NEAR(d.p, p1, 1e-9);
    EXPECT_NEAR(d.p_adjusted, 3 * p1, 1e-9);  // equal p values: Holm gives each the largest multiple
    EXPECT_TRUE(d.resolved);
    EXPECT_FALSE(d.resolved_adjusted);
    EXPECT_STREQ(ember::paired_verdict(d), "borderline");
  }
  const auto md = ember::report_markdown(holm);
  EXPECT_NE(md.find("adjusted by Holm's step-down method across the 3 members compared with the baseline"),
            std::string::npos) << md;
  EXPECT_NE(md.find("| p | p (holm) | sign agrees |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 0.0261 | 0.0784 | 3/3 | borderline |"), std::string::npos) << md;
  const auto rows = read_csv(ember::report_csv(holm));
  EXPECT_EQ(rows.back().at("correction"), "holm");
  EXPECT_EQ(rows.back().at("val_loss_verdict"), "borderline");
  EXPECT_EQ(rows.back().at("val_loss_resolved"), "yes");  // the interval alone
  EXPECT_NEAR(std::stod(rows.back().at("val_loss_p_adjusted")), 3 * p1, 1e-9);
  EXPECT_EQ(ember::paired_difference_chart(holm).categories[0], "a (borderline)");
  const auto none = ember::make_report(runs, "base", ember::Correction::none);
  EXPECT_STREQ(ember::paired_verdict(none.rows[1].paired.at("val_loss")), "resolved");
  EXPECT_NE(ember::report_markdown(none).find("not corrected for the 3 members"), std::string::npos);
  const auto bonf = ember::make_report(runs, "base", ember::Correction::bonferroni);
  EXPECT_NEAR(bonf.rows[2].paired.at("val_loss").p_adjusted, 3 * p1, 1e-9);
}

// The tapered CPU experiment (experiments/tapered-cpu/report.csv, 6 members x 5 seeds) re-read with
// the correction: the p values against an independent computation (mpmath's regularized incomplete
// beta, P(|T| >= |t|) = I_{4/(4+t^2)}(2, 1/2)), then Holm over the five members by hand.
TEST(PairedReport, TheTaperedExperimentIsBorderlineAfterHolm) {
  std::ifstream in(EMBER_SOURCE_DIR_DEFAULT "/experiments/tapered-cpu/report.csv");
  ASSERT_TRUE(in) << "experiments/tapered-cpu/report.csv is missing";
  const std::string text{std::istreambuf_iterator<char>(in), {}};
  std::vector<ember::RunResult> runs;
  for (const auto& row : read_csv(text)) {
    if (row.at("row") != "seed") continue;
    ember::RunResult r;
    r.group = row.at("member"), r.seed = std::stoll(row.at("seed")), r.dir = row.at("runs");
    r.val_loss = std::stod(row.at("val_loss")), r.val_ppl = std::stod(row.at("val_ppl"));
    r.train_loss = std::stod(row.at("train_loss"));
    runs.push_back(r);
  }
  ASSERT_EQ(runs.size(), 30u);
  const auto report = ember::make_report(runs, "uniform");
  struct Want {
    const char* member;
    double p_loss, holm_loss, p_ppl, holm_ppl;
    const char* loss_verdict;
  };
  const Want want[] = {{"linear", 0.0493, 0.1828, 0.0567, 0.2132, "borderline"},
                       {"cosine", 0.0768, 0.1828, 0.0848, 0.2132, "not resolved"},
                       {"sigmoid", 0.0457, 0.1828, 0.0533, 0.2132, "borderline"},
                       {"cosine_1.25-0.75", 0.1977, 0.1977, 0.2069, 0.2132, "not resolved"},
                       {"cosine_1.75-0.25", 0.0304, 0.1522, 0.0376, 0.1880, "borderline"}};
  for (const auto& w : want) {
    const auto row = std::find_if(report.rows.begin(), report.rows.end(), [&](const auto& r) { return r.member == w.member; });
    ASSERT_NE(row, report.rows.end()) << w.member;
    const auto& loss = row->paired.at("val_loss");
    const auto& ppl = row->paired.at("val_ppl");
    EXPECT_NEAR(loss.p, w.p_loss, 5e-5) << w.member;
    EXPECT_NEAR(loss.p_adjusted, w.holm_loss, 5e-5) << w.member;
    EXPECT_NEAR(ppl.p, w.p_ppl, 5e-5) << w.member;
    EXPECT_NEAR(ppl.p_adjusted, w.holm_ppl, 5e-5) << w.member;
    EXPECT_STREQ(ember::paired_verdict(loss), w.loss_verdict) << w.member;
    EXPECT_FALSE(loss.resolved_adjusted || ppl.resolved_adjusted) << w.member;
  }
}

TEST(PairedReport, MembersWithDifferentSeedSetsAreComparedOnTheirCommonSeeds) {
  EXPECT_EQ(ember::common_seeds({3, 1, 2}, {4, 2, 3}), (std::vector<int64_t>{2, 3}));
  const std::vector<ember::RunResult> runs = {
      seeded_run("base", 1, 2.0), seeded_run("base", 2, 2.1),  seeded_run("base", 3, 2.2),
      seeded_run("wide", 2, 1.9), seeded_run("wide", 3, 2.15), seeded_run("wide", 4, 1.0),
      seeded_run("far", 7, 1.5)};
  const auto report = ember::make_report(runs, "base");
  ASSERT_EQ(report.rows.size(), 3u);
  const auto& wide = report.rows[1];
  EXPECT_EQ(wide.seeds, (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(wide.common_seeds, (std::vector<int64_t>{2, 3}));
  const auto& loss = wide.paired.at("val_loss");
  ASSERT_EQ(loss.diffs.size(), 2u);  // seed 4 (the baseline has none) is left out
  EXPECT_NEAR(loss.diffs[0], -0.2, 1e-12);
  EXPECT_NEAR(loss.diffs[1], -0.05, 1e-12);
  EXPECT_NEAR(loss.mean, -0.125, 1e-12);
  EXPECT_NEAR(loss.ci_high, -0.125 + 12.7062047 * 0.075, 1e-6);  // sd = 0.15 / sqrt(2), n = 2
  EXPECT_FALSE(loss.resolved);
  EXPECT_EQ(loss.sign_agree, 2);
  EXPECT_TRUE(wide.paired.count("ppl 1e-06 .. 1e-05"));
  EXPECT_TRUE(report.rows[2].common_seeds.empty());
  EXPECT_TRUE(report.rows[2].paired.empty());
  const auto md = ember::report_markdown(report);
  EXPECT_NE(md.find("## Paired differences against `base`"), std::string::npos) << md;
  EXPECT_NE(md.find("Compared on their common seeds 2, 3 only: wide has 2, 3, 4; base has 1, 2, 3."),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| val_loss | 2: -0.2, 3: -0.05 | -0.125 | [-1.078, +0.828] | 0.344 | 0.344 | 2/2 | not resolved |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("No seed in common with `base` (far has 7; base has 1, 2, 3): not compared."), std::string::npos)
      << md;
}

TEST(PairedReport, TheDifferenceFigureDrawsTheIntervalAndSaysWhatIsNotResolved) {
  const std::vector<ember::RunResult> runs = {
      seeded_run("base", 1, 2.0), seeded_run("base", 2, 2.1), seeded_run("base", 3, 2.2),
      seeded_run("lev", 1, 1.8),  seeded_run("lev", 2, 1.91), seeded_run("lev", 3, 2.0),
      seeded_run("wide", 2, 1.9), seeded_run("wide", 3, 2.15), seeded_run("one", 2, 1.0)};
  const auto chart = ember::paired_difference_chart(ember::make_report(runs, "base"));
  ASSERT_EQ(chart.categories, (std::vector<std::string>{"lev", "wide (not resolved)"}));  // "one": no interval
  ASSERT_EQ(chart.series.size(), 1u);
  EXPECT_NEAR(chart.series[0].values[0], -0.19666666666666666, 1e-12);
  EXPECT_NEAR(chart.series[0].spread[0], (-0.1823 + 0.211) / 2, 1e-4);  // the table's [-0.211, -0.1823]
  EXPECT_NEAR(chart.series[0].values[1], -0.125, 1e-12);
  EXPECT_NEAR(chart.series[0].spread[1], 12.7062047 * 0.075, 1e-6);
  EXPECT_TRUE(chart.from_zero);
  EXPECT_EQ(chart.title, "Validation loss against base, paired by seed (2-3 seeds)");
  EXPECT_TRUE(ember::paired_difference_chart(ember::make_report({runs[0], runs[3]}, "base")).categories.empty());
}

TEST(ReportFigures, ACosineHistogramPoolsTheSeedsAndItsAxisShowsEveryMarker) {
  auto a = seeded_run("lev", 1, 2.0), b = seeded_run("lev", 2, 2.0), bare = seeded_run("lev", 3, 2.0);
  a.cosine_histogram = {0, 2, 3, 0}, a.capacity_mu = 0.9, a.capacity_epsilon = 1.1;
  b.cosine_histogram = {1, 0, 4, 0}, b.capacity_mu = 0.8, b.capacity_epsilon = 1.3;
  const auto h = ember::pooled_cosine_histogram("lev", {&a, &b, &bare});  // the bare run has no histogram
  EXPECT_EQ(h.counts, (std::vector<int64_t>{1, 2, 7, 0}));
  EXPECT_NEAR(h.mu, 0.85, 1e-15);
  EXPECT_NEAR(h.epsilon, 1.2, 1e-15);
  EXPECT_EQ(h.label, "lev (2 seeds pooled)");
  const auto [lo, hi] = ember::cosine_axis_range({h});
  EXPECT_LE(lo, -1.0);
  EXPECT_GE(hi, 1.2 + 0.02);  // epsilon > 1 is on the axis
  EXPECT_TRUE(ember::pooled_cosine_histogram("lev", {&bare}).counts.empty());
}

TEST(PairedReport, TheFinalInputGeometryIsReportedAndPaired) {
  std::vector<ember::RunResult> runs;
  const double eps[2][2] = {{1.16, 1.18}, {1.30, 1.36}};
  for (int m = 0; m < 2; ++m)
    for (int s = 1; s <= 2; ++s) {
      auto r = seeded_run(m ? "lev" : "base", s, 2.0);
      r.cosine_histogram = {1, 2, 3}, r.capacity_mu = 0.5 + 0.1 * m, r.capacity_epsilon = eps[m][s - 1];
      runs.push_back(r);
    }
  const auto report = ember::make_report(runs, "base");
  const auto& lev = report.rows[1];
  EXPECT_NEAR(lev.values.at("input epsilon").mean, 1.33, 1e-12);
  EXPECT_NEAR(lev.paired.at("input epsilon").mean, 0.16, 1e-12);  // (0.14 + 0.18) / 2
  EXPECT_NEAR(lev.paired.at("input mu").mean, 0.1, 1e-12);
  const auto md = ember::report_markdown(report);
  EXPECT_NE(md.find("| lev | 0.6000 ± 0.0000 | 1.3300 ± 0.0424 |"), std::string::npos) << md;
  const auto rows = read_csv(ember::report_csv(report));
  EXPECT_EQ(rows.back().at("input epsilon"), "1.33");
  EXPECT_NEAR(std::stod(rows.back().at("input epsilon ci_low")), 0.16 - 12.7062047 * 0.02, 1e-6);  // 2 seeds
  EXPECT_EQ(rows.back().at("input epsilon resolved"), "no");
}

TEST(PairedReport, AResolvedDifferenceAndOneSeedAreSaidSo) {
  const std::vector<ember::RunResult> runs = {
      seeded_run("base", 1, 2.0), seeded_run("base", 2, 2.1), seeded_run("base", 3, 2.2),
      seeded_run("lev", 1, 1.8),  seeded_run("lev", 2, 1.91), seeded_run("lev", 3, 2.0),
      seeded_run("one", 2, 1.0)};
  const auto md = ember::report_markdown(ember::make_report(runs, "base"));
  EXPECT_NE(md.find("Seeds 1, 2, 3 (both members)."), std::string::npos) << md;
  EXPECT_NE(md.find("| val_loss | 1: -0.2, 2: -0.19, 3: -0.2 | -0.1967 | [-0.211, -0.1823] | 0.000287 | 0.000287 | 3/3 | resolved |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| val_loss | 2: -1.1 | -1.1 | n/a (1 seed) | n/a | n/a | 1/1 | not resolved |"), std::string::npos) << md;
}

TEST(PairedReport, TwoRunsOfOneSeedAreAWarningAndThePairingUsesTheFirst) {
  auto twin = seeded_run("wide", 1, 5.0);
  twin.dir = "wide_again_seed1";
  const auto report = ember::make_report({seeded_run("base", 1, 2.0), seeded_run("wide", 1, 1.5), twin}, "base");
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_NE(report.warnings[0].find("member 'wide' has 2 runs with train.seed 1 (wide_seed1, wide_again_seed1)"),
            std::string::npos)
      << report.warnings[0];
  EXPECT_NEAR(report.rows[1].paired.at("val_loss").mean, -0.5, 1e-12);
}

// report.csv read back: one row per member and seed, then the member's summary, and the summary's
// statistics recomputed from the seed rows.
TEST(PairedReport, TheCsvHoldsEverySeedAndItsStatisticsRecompute) {
  const std::vector<ember::RunResult> runs = {
      seeded_run("base", 1, 2.0, 30), seeded_run("base", 2, 2.1, 31), seeded_run("base", 3, 2.2, 29),
      seeded_run("lev", 3, 2.3, 25), seeded_run("lev", 1, 1.8, 26),  seeded_run("lev", 2, 1.91, 24),
      seeded_run("lev", 5, 1.7, 20)};
  const auto rows = read_csv(ember::report_csv(ember::make_report(runs, "base")));
  ASSERT_EQ(rows.size(), 9u);  // 3 + 1 and 4 + 1
  std::vector<std::string> kinds, seeds;
  for (const auto& r : rows) kinds.push_back(r.at("row")), seeds.push_back(r.at("seed"));
  EXPECT_EQ(kinds, (std::vector<std::string>{"seed", "seed", "seed", "summary", "seed", "seed", "seed", "seed",
                                             "summary"}));
  EXPECT_EQ(seeds, (std::vector<std::string>{"1", "2", "3", "", "1", "2", "3", "5", ""}));
  std::map<std::pair<std::string, std::string>, std::map<std::string, std::string>> seed_row;
  for (const auto& r : rows)
    if (r.at("row") == "seed") seed_row[{r.at("member"), r.at("seed")}] = r;
  const auto& summary = rows[8];
  EXPECT_EQ(summary.at("member"), "lev");
  EXPECT_EQ(summary.at("n_common_seeds"), "3");
  EXPECT_EQ(summary.at("common_seeds"), "1;2;3");
  EXPECT_EQ(rows[3].at("n_common_seeds"), "");  // the baseline is not compared with itself
  EXPECT_EQ(rows[3].at("val_loss_mean_diff"), "");
  const auto& lev5 = seed_row[{"lev", "5"}];
  EXPECT_EQ(lev5.at("val_loss_diff"), "");  // the baseline has no seed 5
  EXPECT_EQ(lev5.at("val_loss"), "1.7");
  for (const std::string metric : {"val_loss", "ppl 1e-06 .. 1e-05"}) {
    const std::string sep = metric == "val_loss" ? "_" : " ";
    std::vector<double> diffs;
    for (const char* seed : {"1", "2", "3"}) {
      const double d = std::stod(seed_row[{"lev", seed}].at(metric)) - std::stod(seed_row[{"base", seed}].at(metric));
      EXPECT_NEAR(std::stod(seed_row[{"lev", seed}].at(metric + sep + "diff")), d, 1e-12) << metric << " " << seed;
      diffs.push_back(d);
    }
    const double mean = (diffs[0] + diffs[1] + diffs[2]) / 3;
    double ss = 0;
    for (double d : diffs) ss += (d - mean) * (d - mean);
    const double half = 4.30265273 * std::sqrt(ss / 2) / std::sqrt(3.0);
    EXPECT_NEAR(std::stod(summary.at(metric + sep + "mean_diff")), mean, 1e-12) << metric;
    EXPECT_NEAR(std::stod(summary.at(metric + sep + "sd_diff")), std::sqrt(ss / 2), 1e-12) << metric;
    EXPECT_NEAR(std::stod(summary.at(metric + sep + "ci_low")), mean - half, 1e-7) << metric;
    EXPECT_NEAR(std::stod(summary.at(metric + sep + "ci_high")), mean + half, 1e-7) << metric;
    const bool resolved = mean - half > 0 || mean + half < 0;
    EXPECT_EQ(summary.at(metric + sep + "resolved"), resolved ? "yes" : "no") << metric;
    const auto agree = std::count_if(diffs.begin(), diffs.end(), [&](double d) { return (d < 0) == (mean < 0); });
    EXPECT_EQ(summary.at(metric + sep + "sign_agree"), std::to_string(agree)) << metric;
  }
  EXPECT_EQ(summary.at("ppl 1e-06 .. 1e-05 resolved"), "yes");  // rare perplexity 25, 26, 24 against 30, 31, 29
  EXPECT_EQ(summary.at("val_loss_resolved"), "no");             // -0.2, -0.19, +0.1
  EXPECT_EQ(summary.at("val_loss_sign_agree"), "2");
  EXPECT_EQ(summary.at("seeds"), "4");
}

}  // namespace
}  // namespace paired_stats_test
