// Sweeps and reports (experiment/): a sweep file's members (grid order, names, seeds, listed members,
// errors naming the file and key), and the report's pooling over seeds and changes against the
// baseline, from run directories written here with known numbers.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>

#include "ember/analysis/bar_chart.h"
#include "ember/analysis/plot_output.h"
#include "ember/run/run_config.h"
#include "ember/experiment/report_figures.h"
#include "ember/experiment/run_report.h"
#include "ember/experiment/sweep_spec.h"
#include "ember/util/error.h"
#include "scratch.h"

namespace {

using ember::testing::scratch_dir;
using ember::testing::write_text;

std::string error_of(const std::string& path) {
  try {
    ember::sweep_members(ember::load_sweep(path));
  } catch (const ember::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Sweep, GridPointsInRowMajorOrderThenListedMembersEachPerSeed) {
  const auto dir = scratch_dir("sweep", "grid");
  const auto file = write_text(dir, "s.yaml", R"(
out: runs/s
configs: [base.yaml]
set: {train.steps: 20}
grid:
  model.embedding.kind: [tied, lev]
  model.mlp.taper.schedule: [uniform, cosine]
members:
  - {name: wide, set: {model.d_model: 256}, configs: [wide.yaml]}
seeds: [1, 2]
baseline: tied_uniform
evals: [perplexity, buckets]
)");
  const auto spec = ember::load_sweep(file.string());
  EXPECT_TRUE(spec.buckets);
  const auto members = ember::sweep_members(spec);
  std::vector<std::string> names;
  for (const auto& m : members) names.push_back(m.name);
  EXPECT_EQ(names, (std::vector<std::string>{"tied_uniform_seed1", "tied_uniform_seed2", "tied_cosine_seed1",
                                             "tied_cosine_seed2", "lev_uniform_seed1", "lev_uniform_seed2",
                                             "lev_cosine_seed1", "lev_cosine_seed2", "wide_seed1", "wide_seed2"}));
  EXPECT_EQ(members[3].group, "tied_cosine");
  EXPECT_EQ(members[3].overrides, (std::vector<std::string>{"train.steps=20", "model.embedding.kind=tied",
                                                            "model.mlp.taper.schedule=cosine", "train.seed=2"}));
  EXPECT_EQ(members[8].configs, (std::vector<std::string>{"base.yaml", "wide.yaml"}));
  EXPECT_EQ(members[8].overrides, (std::vector<std::string>{"train.steps=20", "model.d_model=256", "train.seed=1"}));
}

TEST(Sweep, BadFilesAreErrorsNamingTheFileAndKey) {
  const auto dir = scratch_dir("sweep", "bad");
  auto expect = [&](const std::string& name, const std::string& text, const std::string& want) {
    const auto msg = error_of(write_text(dir, name, text).string());
    EXPECT_NE(msg.find(want), std::string::npos) << name << ": " << msg;
  };
  expect("a.yaml", "out: x\ngrid: {model.d_model: [64]}\nseed: [1]\n",
         "a.yaml: seed: unknown key (did you mean 'seeds'?)");
  expect("b.yaml", "out: x\n", "b.yaml: grid: a sweep needs a grid, a list of members, or both");
  expect("c.yaml", "out: x\ngrid: {model.d_model: []}\n", "c.yaml: grid.model.d_model: expected a non-empty list");
  expect("d.yaml", "out: x\nmembers: [{name: a}, {name: a}]\n", "two members are both named 'a'");
  expect("e.yaml", "out: x\ngrid: {model.d_model: [64]}\nbaseline: 128\n", "baseline: no member named '128'");
  expect("f.yaml", "grid: {model.d_model: [64]}\n", "f.yaml: out: missing");
  expect("g.yaml", "out: x\ngrid: {model.d_model: [64]}\nevals: [lambada]\n", "unknown evaluation 'lambada'");
  expect("h.yaml", "out: x\ngrid: {model.d_model: [64]}\ntasks: [{name: t, kind: quiz, file: h.yaml}]\n",
         "h.yaml: tasks[0].kind: unknown task kind 'quiz'");
  expect("i.yaml", "out: x\ngrid: {model.d_model: [64]}\ntasks: [{name: t, kind: choice, file: nowhere.jsonl}]\n",
         "i.yaml: tasks[0].file: 'nowhere.jsonl' not found");
  EXPECT_NE(error_of((dir / "missing.yaml").string()).find("not found"), std::string::npos);
}

TEST(Sweep, AMemberWithABadKeyFailsBeforeAnyTraining) {
  auto members =
      std::vector<ember::SweepMember>{{"ok", "ok", {}, {"train.steps=500"}}, {"typo", "typo", {}, {"model.d_modl=64"}}};
  try {
    ember::check_sweep_members(members);
    FAIL() << "a bad key was accepted";
  } catch (const ember::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("sweep member 'typo'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("d_modl"), std::string::npos) << e.what();
  }
}

namespace {

// A finished run directory with the given numbers: its resolved config, two training records and
// a full evaluation (with two frequency buckets).
void write_run(const std::filesystem::path& dir, const std::string& mixer, double train_loss, double val_loss,
               double rare_ppl, double rate, double task_accuracy, int seed = 3) {
  std::filesystem::create_directories(dir);
  write_text(dir, "config.yaml",
             ember::to_yaml(ember::load_config({}, {"model.mixer.kind=" + mixer, "train.seed=" + std::to_string(seed)})));
  write_text(dir, "metrics.jsonl",
             "{\"kind\":\"train\",\"step\":10,\"tokens\":1000,\"loss\":9.0,\"tokens_per_s\":1.0}\n"
             "{\"kind\":\"train\",\"step\":20,\"tokens\":2000,\"loss\":" +
                 std::to_string(train_loss) + ",\"tokens_per_s\":" + std::to_string(rate) +
                 "}\n{\"kind\":\"eval\",\"step\":20,\"val_loss\":9,\"val_ppl\":9}\n");
  write_text(dir, "eval.json",
             "{\"loss\":" + std::to_string(val_loss) + ",\"perplexity\":" + std::to_string(std::exp(val_loss)) +
                 ",\"tokens\":100,\"buckets\":[{\"tokens\":0,\"perplexity\":1.0},{\"tokens\":40,\"perplexity\":" +
                 std::to_string(rare_ppl) + "},{\"tokens\":60,\"perplexity\":2.0}],\"tasks\":{\"hs\":{\"accuracy\":" +
                 std::to_string(task_accuracy) + ",\"accuracy_norm\":0.25}}}");
}

}  // namespace

TEST(Report, SeedsArePooledAndChangesAreAgainstTheBaselineMean) {
  const auto dir = scratch_dir("report", "pool");
  write_run(dir / "attention_seed1", "attention", 2.0, 1.0, 10.0, 100, 0.5, 1);
  write_run(dir / "attention_seed2", "attention", 2.2, 1.2, 14.0, 300, 0.7, 2);
  write_run(dir / "titans", "titans", 1.5, 0.9, 9.0, 50, 0.9, 2);
  std::vector<ember::RunResult> runs;
  for (const char* name : {"attention_seed1", "attention_seed2", "titans"}) runs.push_back(ember::read_run(dir / name));
  EXPECT_EQ(runs[0].rare_ppl, 10.0);  // the empty bucket is skipped
  EXPECT_EQ(runs[0].frequent_ppl, 2.0);
  EXPECT_EQ(runs[0].tokens, 2000);
  EXPECT_EQ(runs[1].seed, 2);  // the config's train.seed
  EXPECT_EQ(runs[0].val_curve.back().first, 2000);  // step 20 at 100 tokens per step
  const auto report = ember::make_report(runs, "attention");
  ASSERT_EQ(report.rows.size(), 2u);
  EXPECT_EQ(report.varied, (std::vector<std::string>{"model.mixer.kind"}));
  const auto& base = report.rows[0];
  EXPECT_EQ(base.runs.size(), 2u);
  EXPECT_NEAR(base.train_loss.mean, 2.1, 1e-12);
  EXPECT_NEAR(base.train_loss.std, std::sqrt(0.02), 1e-12);  // sample std of {2.0, 2.2}
  EXPECT_NEAR(base.val_ppl.mean, (std::exp(1.0) + std::exp(1.2)) / 2, 1e-5);
  EXPECT_NEAR(base.tokens_per_s.mean, 200, 1e-9);
  const auto& titans = report.rows[1];
  EXPECT_NEAR(titans.val_ppl_change, 100 * (std::exp(0.9) / base.val_ppl.mean - 1), 1e-3);
  EXPECT_NEAR(titans.rare_ppl_change, 100 * (9.0 / 12.0 - 1), 1e-9);
  EXPECT_EQ(base.val_ppl_change, 0.0);
  EXPECT_EQ(report.tasks, (std::vector<std::string>{"hs acc", "hs acc_norm"}));
  EXPECT_NEAR(base.tasks.at("hs acc").mean, 0.6, 1e-12);
  EXPECT_NEAR(base.tasks.at("hs acc").std, std::sqrt(0.02), 1e-12);
  EXPECT_NEAR(titans.tasks.at("hs acc_norm").mean, 0.25, 1e-12);
  const auto md = ember::report_markdown(report);
  EXPECT_NE(md.find("- titans vs attention: -"), std::string::npos) << md;
  EXPECT_NE(md.find("| attention | attention | 2 |"), std::string::npos) << md;
  const auto csv = ember::report_csv(report);
  EXPECT_NE(csv.find("member,model.mixer.kind,seeds,params"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",hs acc,hs acc std,hs acc_norm,hs acc_norm std,val_tokens,runs"), std::string::npos) << csv;
  EXPECT_NE(md.find("| 0.6000 ± 0.1414 |"), std::string::npos) << md;
  // titans' one run pairs with attention's of the same seed (2): a difference, no interval.
  EXPECT_NE(md.find("Compared on their common seeds 2 only: titans has 2; attention has 1, 2."), std::string::npos)
      << md;
  EXPECT_NE(md.find("| val_loss | 2: -0.3 | -0.3 | n/a (1 seed) | n/a | n/a | 1/1 | not resolved |"), std::string::npos) << md;
  EXPECT_NE(csv.find("\ntitans,titans,1,"), std::string::npos) << csv;  // its seed row, then its summary
  EXPECT_THROW(ember::make_report(runs, "lev"), ember::UsageError);
  EXPECT_THROW(ember::read_run(dir / "none"), ember::UsageError);
}

// A run without an evaluation record is "n/a" (an empty CSV cell), not a perplexity of 0 and a
// -100% change; a single seed has no spread cell; a change against a baseline without buckets is empty.
TEST(Report, MissingValuesAreShownAsMissing) {
  ember::RunResult base, stripped;
  base.group = "base", stripped.group = "stripped";
  base.dir = "base", stripped.dir = "stripped";
  base.val_loss = 1.0, base.val_ppl = std::exp(1.0), base.train_loss = stripped.train_loss = 1.1;
  stripped.rare_ppl = 5.0, stripped.frequent_ppl = 2.0;  // buckets the baseline lacks
  const auto report = ember::make_report({base, stripped}, "base");
  const auto& row = report.rows[1];
  EXPECT_TRUE(std::isnan(row.val_ppl.mean));
  EXPECT_TRUE(std::isnan(row.val_ppl_change));
  EXPECT_TRUE(std::isnan(row.rare_ppl_change));
  const auto md = ember::report_markdown(report);
  EXPECT_NE(md.find("| n/a | n/a | n/a |"), std::string::npos) << md;  // val loss, val ppl, change
  const auto csv = ember::report_csv(report);
  const auto line = csv.substr(csv.find("\nstripped,") + 1);
  EXPECT_EQ(line.rfind("stripped,1,0,0,1.1,,,,,,,5,,,2,", 0), 0u) << csv;
  const auto out = scratch_dir("report", "missing");
  ember::write_report(report, {base, stripped}, out);  // the figures skip what is missing
  EXPECT_TRUE(std::filesystem::is_regular_file(out / "report.csv"));
}

TEST(Report, FigureInputsAreReadAndEveryFigureIsWrittenAsPngAndSvg) {
  const auto dir = scratch_dir("report", "figures");
  write_run(dir / "tied", "attention", 2.0, 1.0, 10.0, 100, 0.5);
  write_text(dir / "tied", "metrics.jsonl",
             "{\"kind\":\"train\",\"step\":10,\"tokens\":1000,\"loss\":9.0,\"tokens_per_s\":1.0}\n"
             "{\"kind\":\"capacity\",\"step\":10,\"tied\":false,\"input_epsilon\":0.3,\"head_epsilon\":0.5}\n"
             "{\"kind\":\"train\",\"step\":20,\"tokens\":2000,\"loss\":8.0,\"tokens_per_s\":1.0}\n"
             "{\"kind\":\"eval\",\"step\":20,\"val_loss\":8.5,\"val_ppl\":4914.8}\n"
             "{\"kind\":\"capacity\",\"step\":20,\"tied\":false,\"input_epsilon\":0.4,\"head_epsilon\":0.6}\n");
  std::vector<int64_t> histogram(2000, 0);
  histogram[1000] = 5, histogram[1200] = 1;
  nlohmann::json ev = {{"loss", 1.0},
                       {"perplexity", std::exp(1.0)},
                       {"tokens", 100},
                       {"buckets",
                        {{{"range", "< 1e-07"}, {"tokens", 0}, {"perplexity", 1.0}},
                         {{"range", "1e-07 .. 1e-06"}, {"tokens", 5}, {"perplexity", 9e5}},
                         {{"range", "1e-06 .. 1e-05"}, {"tokens", 40}, {"perplexity", 30.0}},
                         {{"range", ">= 1e-05"}, {"tokens", 60}, {"perplexity", 3.0}}}},
                       {"capacity", {{"histogram", histogram}, {"mu", 0.03}, {"epsilon", 0.19}}}};
  write_text(dir / "tied", "eval.json", ev.dump());
  const auto run = ember::read_run(dir / "tied");
  ASSERT_EQ(run.buckets.size(), 3u);  // the empty bucket is not drawn
  EXPECT_EQ(run.buckets[1].range, "1e-06 .. 1e-05");
  EXPECT_EQ(run.buckets[1].tokens, 40);
  EXPECT_EQ(run.buckets[2].perplexity, 3.0);
  EXPECT_EQ(run.rare_ppl, 30.0);  // 5 of 105 tokens are too few to stand for the rare vocabulary (< 10%)
  EXPECT_EQ(run.rare_range, "1e-06 .. 1e-05");
  ASSERT_EQ(run.epsilon_curve.size(), 2u);
  EXPECT_EQ(run.epsilon_curve[1].tokens, 2000);  // step 20 at 100 tokens per step
  EXPECT_EQ(run.epsilon_curve[0].input, 0.3);
  EXPECT_EQ(run.epsilon_curve[1].head, 0.6);
  EXPECT_FALSE(run.tied);
  EXPECT_EQ(run.cosine_histogram, histogram);
  EXPECT_EQ(run.capacity_epsilon, 0.19);
  ASSERT_TRUE(ember::plotting_available()) << "the test build needs PLplot (libplplot-dev)";
  const auto out = dir / "out";
  std::filesystem::create_directories(out);
  const auto figures = ember::write_report_figures(ember::make_report({run}, ""), {run}, out);
  std::vector<std::string> names;
  for (const auto& f : figures) names.push_back(f.name);
  EXPECT_EQ(names, (std::vector<std::string>{"val_loss_bars", "val_loss", "train_loss", "bucket_ppl", "epsilon",
                                             "epsilon_head", "cosine_histogram"}));
  for (const auto& name : names)
    for (const char* ext : {".png", ".svg"})
      EXPECT_GT(std::filesystem::file_size(out / (name + ext)), 1000u) << name << ext;
  EXPECT_NE(ember::figures_markdown(figures).find(
                "![Perplexity per frequency bucket](bucket_ppl.png) ([SVG](bucket_ppl.svg))"),
            std::string::npos);
  ember::BarChart bad{"t", "y", {"a"}, {{"s", {-1.0}, {}}}, true, true};
  EXPECT_THROW(ember::write_bar_chart(out / "bad.png", bad), ember::UsageError);  // non-positive on a log axis
  bad.log_y = false;
  EXPECT_THROW(ember::write_bar_chart(out / "bad.pdf", bad), ember::UsageError);  // neither .png nor .svg
  bad.series[0].values = {1.0, 2.0};
  EXPECT_THROW(ember::write_bar_chart(out / "bad.png", bad), ember::UsageError);  // not one value per category
}
