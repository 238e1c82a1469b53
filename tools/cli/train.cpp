#include "ember/util/log.h"

#include <iostream>

#include "cli/commands.h"
#include "ember/train/trainer.h"
#include "ember/util/error.h"
#include "ember/util/files.h"

namespace ember::cli {
namespace {

struct TrainArgs {
  ConfigArgs config;
  bool resume = false;
  std::string run_dir;
  int64_t stop_after = 0;
  std::string profile;
  bool debug_nonfinite = false;
  bool measure_peak = false;
};

void run_train(const TrainArgs& args) {
  TrainOptions opt;
  opt.resume = args.resume;
  opt.run_dir = args.run_dir;
  opt.stop_after = args.stop_after;
  opt.measure_peak = args.measure_peak;
  if (!args.profile.empty()) opt.profile = parse_profile_steps(args.profile);
  std::vector<std::string> files = args.config.files;
  auto overrides = args.config.overrides;
  if (args.debug_nonfinite) overrides.push_back("train.debug_nonfinite=true");
  if (files.empty()) {
    // --resume with only a run directory: continue with the config saved there.
    if (!args.resume || args.run_dir.empty())
      throw UsageError("train: give -c CONFIG (or --resume --run-dir DIR to continue a run)");
    files.push_back((fs::path(args.run_dir) / "config.yaml").string());
  }
  Trainer trainer(load_config(files, overrides), opt);
  auto summary = trainer.run();
  if (!summary.main_rank) return;
  std::cout << "run directory: " << summary.run_dir.string() << "\n";
  if (summary.final_eval)
    std::cout << fmt::format("final validation loss {:.4f}, perplexity {:.3f}\n", summary.final_eval->loss,
                             summary.final_eval->perplexity);
  if (summary.preempted) std::cout << "stopped early at step " << summary.step << "; resume with --resume\n";
}

}  // namespace

void register_train(CLI::App& app) {
  auto* cmd = app.add_subcommand("train", "Train a model from YAML config(s)");
  cmd->footer(
      "Examples:\n"
      "  ember train -c configs/tiny.yaml\n"
      "  ember train -c configs/tiny.yaml --set train.steps=2000 --set log.name=longer\n"
      "  ember train --resume --run-dir runs/tiny       # continue after preemption or a crash\n"
      "  ember train -c configs/tiny.yaml --profile 20:23   # trace + time by category in runs/tiny/profile\n"
      "SIGINT/SIGTERM save a checkpoint and exit 0. A run directory is locked while it trains.\n\n" +
      kinds_help());
  auto args = std::make_shared<TrainArgs>();
  add_config_options(*cmd, args->config, false);
  cmd->add_flag("--resume", args->resume, "Continue from the newest complete checkpoint of the run");
  cmd->add_option("--run-dir", args->run_dir, "Run directory (default: log.dir/log.name)");
  cmd->add_option("--stop-after", args->stop_after,
                  "Stop as if preempted after N steps of this session (checkpoint + exit 0)");
  cmd->add_option("--profile", args->profile,
                  "Record steps FIRST:LAST (or one STEP) with the PyTorch profiler: a Chrome/Perfetto trace and "
                  "the time by category (matmul, attention, element-wise, loss head, optimizer, communication, "
                  "idle) in <run>/profile/")
      ->type_name("FIRST:LAST");
  cmd->add_flag("--debug-nonfinite", args->debug_nonfinite,
                "On a non-finite loss or gradient, name the first module and op that produced a NaN / inf "
                "and save the batch (train.debug_nonfinite=true)");
  cmd->add_flag("--measure-peak", args->measure_peak,
                "Measure MFU's matmul peak now (0.5 s) instead of reading the one cached for this device, "
                "precision and thread count (~/.cache/ember/peak); a higher measurement replaces the cached one");
  cmd->callback([args] { run_train(*args); });
}

}  // namespace ember::cli
