// A sweep's member life cycle (experiment/sweep_runner.h) without training anything: the training
// command (fresh, resumed, data-parallel, threads split), the complete marker skipping a member
// without starting a child, failures of the child named by the sweep and no report from none, the
// Slurm array script, and shell quoting. The CLI test cli.sweep trains real members.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "ember/experiment/sweep_runner.h"
#include "ember/util/error.h"
#include "scratch.h"

namespace sweep_runner_test {  // named: its helpers share a unity group with other tests'
namespace {

using ember::testing::scratch_dir;

ember::SweepSpec spec_in(const std::filesystem::path& dir) {
  ember::SweepSpec spec;
  spec.file = "s.yaml";
  spec.out = (dir / "out").string();
  return spec;
}

ember::SweepMember member(const std::string& name) {
  return {name, name, {"base.yaml", "lev.yaml"}, {"optim.lr=1e-3", "train.seed=2"}};
}

bool contains(const std::vector<std::string>& argv, const std::vector<std::string>& run) {
  return std::search(argv.begin(), argv.end(), run.begin(), run.end()) != argv.end();
}

}  // namespace

TEST(SweepRunner, AFreshMemberTrainsFromItsConfigsIntoItsRunDirectory) {
  const auto dir = scratch_dir("sweep_runner", "fresh");
  const auto spec = spec_in(dir);
  const ember::SweepRunner runner(spec, {1, 0, -1, "/opt/ember"});
  const auto argv = runner.train_command(member("lev_seed2"));
  EXPECT_EQ(argv.front(), "/opt/ember");
  EXPECT_EQ(argv[1], "train");
  EXPECT_TRUE(contains(argv, {"-c", "base.yaml", "-c", "lev.yaml"}));
  EXPECT_TRUE(contains(argv, {"--set", "optim.lr=1e-3", "--set", "train.seed=2"}));
  EXPECT_TRUE(contains(argv, {"--set", "log.dir=" + spec.out, "--set", "log.name=lev_seed2"}));
  EXPECT_FALSE(contains(argv, {"--resume"}));
  EXPECT_EQ(std::count(argv.begin(), argv.end(), "train.threads=1"), 0);  // one process: the trainer's default
}

TEST(SweepRunner, AMemberWithCheckpointsResumesAndLaunchRunsItDataParallel) {
  const auto dir = scratch_dir("sweep_runner", "resume");
  const auto spec = spec_in(dir);
  std::filesystem::create_directories(dir / "out" / "lev" / "checkpoints" / "step_10");
  const ember::SweepRunner runner(spec, {1, 2, -1, "/opt/ember"});
  const auto argv = runner.train_command(member("lev"));
  EXPECT_TRUE(contains(argv, {"/opt/ember", "launch", "-n", "2", "--", "/opt/ember", "train"}));
  EXPECT_TRUE(contains(argv, {"--resume", "--run-dir", (dir / "out" / "lev").string()}));
  EXPECT_FALSE(contains(argv, {"-c", "base.yaml"}));  // the run's own config.yaml holds them
  // Two ranks share the machine's CPUs.
  EXPECT_TRUE(std::any_of(argv.begin(), argv.end(), [](const std::string& a) { return a.rfind("train.threads=", 0) == 0; }));
}

TEST(SweepRunner, ACompleteMemberIsSkippedWithoutStartingAChild) {
  const auto dir = scratch_dir("sweep_runner", "complete");
  const auto spec = spec_in(dir);
  std::filesystem::create_directories(dir / "out" / "done");
  std::ofstream(dir / "out" / "done" / "eval.json") << "{}";
  ember::SweepRunner runner(spec, {1, 0, -1, (dir / "no-such-ember").string()});
  EXPECT_EQ(runner.run(member("done")), ember::MemberOutcome::done);
  // A member that must train does start one: here it cannot, and that is the member's failure.
  EXPECT_EQ(runner.run_all({member("fresh")}), std::vector<ember::MemberOutcome>{ember::MemberOutcome::failed});
}

TEST(SweepRunner, FailedMembersAreNamedAndNoReportIsWrittenWithoutResults) {
  const auto dir = scratch_dir("sweep_runner", "failed");
  const auto spec = spec_in(dir);
  const std::vector<ember::SweepMember> members = {member("a"), member("b")};
  try {
    ember::run_sweep(spec, members, {2, 0, -1, "/bin/false"});
    FAIL() << "a sweep whose trainers all fail must throw";
  } catch (const ember::Error& e) {
    EXPECT_NE(std::string(e.what()).find("2 member(s) failed: a, b"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "out" / "report.md"));
  EXPECT_TRUE(std::filesystem::exists(dir / "out" / "logs" / "a.log"));  // side by side: a log each
  EXPECT_THROW(ember::run_sweep(spec, members, {1, 0, 2, "/bin/false"}), ember::UsageError);  // --member 2 of 2
}

TEST(SweepRunner, TheSlurmArrayRunsOneMemberPerTask) {
  const auto dir = scratch_dir("sweep_runner", "slurm");
  const auto spec = spec_in(dir);
  const auto script =
      ember::write_slurm_array(spec, "my sweep.yaml", 3, {"--gres=gpu:1", "--time=2:00:00"}, {1, 4, -1, "/opt/ember"});
  EXPECT_EQ(script, dir / "out" / "sweep.sbatch");
  std::ifstream in(script);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("#SBATCH --array=0-2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("#SBATCH --gres=gpu:1\n#SBATCH --time=2:00:00\n"), std::string::npos) << text;
  EXPECT_NE(text.find("exec /opt/ember sweep 'my sweep.yaml' --member \"$SLURM_ARRAY_TASK_ID\" --launch 4\n"),
            std::string::npos)
      << text;
  EXPECT_TRUE(std::filesystem::is_directory(dir / "out" / "logs"));
  EXPECT_THROW(ember::write_slurm_array(spec, "s.yaml", 0, {}, {}), ember::UsageError);
}

TEST(SweepRunner, ShellQuotingKeepsEveryArgumentOneWord) {
  EXPECT_EQ(ember::shell_quote("runs/a_1=2,3:4+5"), "runs/a_1=2,3:4+5");
  EXPECT_EQ(ember::shell_quote("a b"), "'a b'");
  EXPECT_EQ(ember::shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(ember::shell_quote(""), "''");
  EXPECT_EQ(ember::shell_quote("$HOME"), "'$HOME'");
}

}  // namespace sweep_runner_test
