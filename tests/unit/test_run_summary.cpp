// Run summaries (experiment/run_summary.h): a run read back from its summary gives the same values
// and the same report as its directory; a summary without the buckets' token counts still reports
// but draws no bucket figure; a malformed summary is an error naming the file and the key.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>

#include "ember/analysis/plot_output.h"
#include "ember/experiment/report_figures.h"
#include "ember/experiment/run_report.h"
#include "ember/experiment/run_summary.h"
#include "ember/run/run_config.h"
#include "ember/util/error.h"
#include "scratch.h"

namespace {

using ember::testing::scratch_dir;
using ember::testing::write_text;

// A finished run directory: config, two training records, a full evaluation with buckets (one
// empty), a task and the capacity evaluation. Values with many digits, to show they come back exact.
void write_run(const std::filesystem::path& dir, const std::string& kind, int seed, double shift) {
  std::filesystem::create_directories(dir);
  write_text(
      dir, "config.yaml",
      ember::to_yaml(ember::load_config({}, {"model.embedding.kind=" + kind, "train.seed=" + std::to_string(seed)})));
  write_text(dir, "metrics.jsonl",
             "{\"kind\":\"train\",\"step\":10,\"tokens\":1000,\"loss\":9.0,\"tokens_per_s\":1234.5678901}\n"
             "{\"kind\":\"train\",\"step\":20,\"tokens\":2000,\"loss\":" +
                 std::to_string(2.1 + shift) + ",\"tokens_per_s\":2345.6789012}\n");
  std::vector<int64_t> histogram(20, 0);
  histogram[10] = 5 + seed, histogram[12] = 1;
  const nlohmann::json ev = {{"loss", 1.0 / 3 + shift},
                             {"perplexity", std::exp(1.0 / 3 + shift)},
                             {"tokens", 105},
                             {"buckets",
                              {{{"range", "< 1e-06"}, {"tokens", 0}, {"perplexity", 1.0}},
                               {{"range", "1e-06 .. 1e-05"}, {"tokens", 5}, {"perplexity", 9e5 / 7}},
                               {{"range", "1e-05 .. 0.0001"}, {"tokens", 40}, {"perplexity", 30.0 / 7 + shift}},
                               {{"range", ">= 0.0001"}, {"tokens", 60}, {"perplexity", 3.0 / 7}}}},
                             {"tasks", {{"hs", {{"accuracy", 0.1 + shift}, {"accuracy_norm", 0.2}}}}},
                             {"capacity", {{"histogram", histogram}, {"mu", 0.03 + shift}, {"epsilon", 0.19 / 3}}}};
  write_text(dir, "eval.json", ev.dump());
}

std::string error_of(const std::filesystem::path& file) {
  try {
    ember::read_run_summary(file);
  } catch (const ember::UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(RunSummary, ARunFromItsSummaryGivesTheSameReportAsItsDirectory) {
  const auto dir = scratch_dir("run_summary", "same");
  std::vector<ember::RunResult> from_dirs, from_summaries;
  int i = 0;
  for (const char* name : {"tied_seed1", "tied_seed2", "lev_seed1", "lev_seed2"}) {
    const std::string kind = std::string(name).substr(0, std::string(name).find('_'));
    write_run(dir / "runs" / name, kind, 1 + i % 2, 0.01 * i * i);
    from_dirs.push_back(ember::read_run(dir / "runs" / name));
    const auto file = ember::write_run_summary(from_dirs.back(), dir / "summaries");
    EXPECT_EQ(file, dir / "summaries" / name / "summary.json");
    EXPECT_TRUE(ember::is_run_summary(file.parent_path()));
    from_summaries.push_back(ember::read_run_or_summary(file.parent_path()));
    ++i;
  }
  EXPECT_FALSE(ember::is_run_summary(dir / "runs" / "lev_seed1"));  // a run directory
  const auto& a = from_dirs[3];
  const auto& b = from_summaries[3];
  EXPECT_EQ(b.dir, a.dir);
  EXPECT_EQ(b.group, "lev");
  EXPECT_EQ(b.seed, 2);
  EXPECT_EQ(b.settings, a.settings);
  EXPECT_EQ(b.params, a.params);
  EXPECT_EQ(b.tokens, a.tokens);
  EXPECT_EQ(b.train_loss, a.train_loss);
  EXPECT_EQ(b.tokens_per_s, a.tokens_per_s);  // exact: the same double
  EXPECT_EQ(b.val_loss, a.val_loss);
  EXPECT_EQ(b.val_ppl, a.val_ppl);
  EXPECT_EQ(b.val_tokens, a.val_tokens);
  EXPECT_EQ(b.val_source, "eval.json");
  ASSERT_EQ(b.buckets.size(), 3u);  // the empty one is not read from eval.json
  EXPECT_EQ(b.buckets[1].perplexity, a.buckets[1].perplexity);
  EXPECT_EQ(b.buckets[1].tokens, 40);
  EXPECT_EQ(b.rare_range, "1e-05 .. 0.0001");  // 5 of 105 tokens are too few (< 10%)
  EXPECT_EQ(b.rare_ppl, a.rare_ppl);
  EXPECT_EQ(b.frequent_ppl, a.frequent_ppl);
  EXPECT_EQ(b.tasks, a.tasks);
  EXPECT_EQ(b.capacity_mu, a.capacity_mu);
  EXPECT_EQ(b.capacity_epsilon, a.capacity_epsilon);
  EXPECT_EQ(b.cosine_histogram, a.cosine_histogram);
  EXPECT_TRUE(b.train_curve.empty());  // the curves stay in the run directory
  const auto want = ember::make_report(from_dirs, "tied"), got = ember::make_report(from_summaries, "tied");
  EXPECT_EQ(ember::report_csv(got), ember::report_csv(want));
  EXPECT_EQ(ember::report_markdown(got), ember::report_markdown(want));
  EXPECT_NE(ember::report_markdown(got).find("| input epsilon |"), std::string::npos);
}

// A summary rebuilt from a report.csv (experiments/summaries_from_report_csv.py) has no token count
// per bucket, no histogram and no curves: the table and the paired differences are whole, and only
// the figures that need nothing more are drawn.
TEST(RunSummary, ASummaryWithoutBucketSizesDrawsNoBucketFigure) {
  const auto dir = scratch_dir("run_summary", "sizes");
  nlohmann::json s = {{"run", "runs/sweeps/x/base_seed1"},
                      {"seed", 1},
                      {"settings", {{"model.embedding.kind", "tied"}}},
                      {"params", 100.0},
                      {"tokens", 2000.0},
                      {"tokens_per_s", 2802.38},
                      {"train_loss", 2.5},
                      {"val_loss", 2.25},
                      {"val_ppl", std::exp(2.25)},
                      {"val_tokens", 500.0},
                      {"val_source", "eval.json"},
                      {"buckets",
                       {{{"range", "< 1e-06"}, {"tokens", nullptr}, {"perplexity", 9e5}},
                        {{"range", ">= 1e-06"}, {"tokens", nullptr}, {"perplexity", 9.0}}}},
                      {"rare_bucket", "< 1e-06"},
                      {"capacity", {{"mu", 0.5}, {"epsilon", 1.25}}}};
  std::vector<ember::RunResult> runs;
  int k = 0;
  for (int seed : {1, 2}) {
    for (const char* member : {"base", "other"}) {
      s["run"] = std::string("runs/sweeps/x/") + member + "_seed" + std::to_string(seed), s["seed"] = seed;
      s["settings"]["model.embedding.kind"] = member;
      s["val_loss"] = 2.25 + 0.125 * k * k, s["buckets"][0]["perplexity"] = 9e5 + 1e3 * k * k;
      s["capacity"]["epsilon"] = 1.25 + 0.01 * k * k, ++k;
      write_text(dir, "s.json", s.dump());
      runs.push_back(ember::read_run_summary(dir / "s.json"));
    }
  }
  EXPECT_EQ(runs[0].rare_ppl, 9e5);
  EXPECT_TRUE(std::isnan(runs[0].buckets[0].tokens));
  const auto report = ember::make_report(runs, "base");
  EXPECT_EQ(report.rare_range, "< 1e-06");
  EXPECT_TRUE(report.rows[1].paired.count("input epsilon"));
  EXPECT_TRUE(report.rows[1].paired.count("ppl < 1e-06"));
  ASSERT_TRUE(ember::plotting_available()) << "the test build needs PLplot (libplplot-dev)";
  std::vector<std::string> names;
  for (const auto& f : ember::write_report_figures(report, runs, dir)) names.push_back(f.name);
  EXPECT_EQ(names, (std::vector<std::string>{"val_loss_bars", "val_loss_diff"}));
}

TEST(RunSummary, AMalformedSummaryIsAnErrorNamingTheFileAndKey) {
  const auto dir = scratch_dir("run_summary", "bad");
  write_run(dir / "tied_seed1", "tied", 1, 0.0);
  const auto good = ember::run_summary_json(ember::read_run(dir / "tied_seed1"));
  const auto broken = [&](auto change) {
    auto j = good;
    change(j);
    return error_of(write_text(dir, "summary.json", j.dump()));
  };
  const std::string file = (dir / "summary.json").string();
  EXPECT_EQ(broken([](auto& j) { j.erase("val_loss"); }), "report: " + file + ": val_loss: missing");
  EXPECT_EQ(broken([](auto& j) { j["train_loss"] = "low"; }),
            "report: " + file + ": train_loss: expected a number, got \"low\"");
  EXPECT_EQ(broken([](auto& j) { j["seed"] = 1.5; }), "report: " + file + ": seed: expected an integer, got 1.5");
  EXPECT_EQ(broken([](auto& j) { j["val_los"] = 1.0; }),
            "report: " + file + ": val_los: unknown key (did you mean 'val_loss'?)");
  EXPECT_EQ(broken([](auto& j) { j["buckets"][1].erase("perplexity"); }),
            "report: " + file + ": buckets[1].perplexity: missing");
  EXPECT_EQ(broken([](auto& j) { j["rare_bucket"] = "1e-09 .. 1e-08"; }),
            "report: " + file + ": rare_bucket: '1e-09 .. 1e-08' is none of the buckets' ranges");
  EXPECT_EQ(broken([](auto& j) { j["capacity"].erase("mu"); }), "report: " + file + ": capacity.mu: missing");
  EXPECT_EQ(broken([](auto& j) { j["settings"]["model.d_model"] = 64; }),
            "report: " + file + ": settings.model.d_model: expected a string, got 64");
  write_text(dir, "summary.json", "{\"run\": ");
  EXPECT_NE(error_of(dir / "summary.json").find("report: " + file + " is not JSON"), std::string::npos);
  EXPECT_EQ(error_of(dir / "none.json"), "report: " + (dir / "none.json").string() + " not found");
  auto j = good;  // null: the run has no evaluation, as read_run gives it
  j["val_loss"] = nullptr;
  write_text(dir, "summary.json", j.dump());
  EXPECT_TRUE(std::isnan(ember::read_run_summary(dir / "summary.json").val_loss));
}
