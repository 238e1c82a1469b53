// The training loop: data -> model -> AdamW with schedule, clipping and accumulation ->
// metrics.jsonl, periodic evaluation and checkpoints in the run directory. Resumable bit for bit:
// the model, optimizer, loader, RNG and train state are checkpoint components.
#pragma once
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>

#include "ember/run/checkpoint.h"
#include "ember/run/parameters.h"
#include "ember/run/run_config.h"
#include "ember/run/run_lock.h"
#include "ember/run/train_state.h"
#include "ember/data/batch_prefetcher.h"
#include "ember/data/loader.h"
#include "ember/distributed/communicator.h"
#include "ember/distributed/environment.h"
#include "ember/distributed/grad_reducer.h"
#include "ember/distributed/stop_vote.h"
#include "ember/distributed/zero_shards.h"
#include "ember/eval/perplexity.h"
#include "ember/model/lm.h"
#include "ember/train/adamw.h"
#include "ember/train/metrics_log.h"
#include "ember/train/train_progress.h"
#include "ember/train/step_outcomes.h"
#include "ember/train/step_profiler.h"

namespace ember {

struct TrainOptions {
  bool resume = false;
  std::string run_dir;     // overrides log.dir/log.name when set
  int64_t stop_after = 0;  // testing aid: act as if preempted after this many steps (0: never)
  ProfileSteps profile;    // --profile: steps to record with the profiler (none by default)
  bool measure_peak = false;  // --measure-peak: MFU's matmul peak measured now, not read from the cache
};

struct TrainSummary {
  std::filesystem::path run_dir;
  int64_t step = 0;
  bool preempted = false;
  bool main_rank = true;  // rank 0 (or the only process): the one that reports
  std::optional<EvalResult> final_eval;
};

std::filesystem::path run_dir_of(const Config& cfg, const TrainOptions& opt);

// Its methods live by concern: trainer_setup.cpp (process, job, data, model, run directory),
// trainer_checkpoints.cpp (saving and resuming), trainer.cpp (the step and the loop's cadence);
// the progress line is train/train_progress.h, evaluations train/run_eval.h.
class Trainer {
 public:
  Trainer(Config cfg, TrainOptions opt);
  ~Trainer();
  TrainSummary run();

 private:
  void set_up();
  bool after_step();  // the cadence after a step; true: stop early
  void join_job();
  void locate_data();
  void open_data();
  void build_model();
  // Runs a set-up phase on every rank; when any rank fails, all do (the failing one with its error).
  void together(const char* phase, const std::function<void()>& fn);
  bool main_rank() const { return dist_.rank == 0; }
  int64_t global_tokens_per_step() const { return cfg_.train.tokens_per_step() * dist_.world; }
  void open_run_dir();
  void save_checkpoint();
  void train_step();    // queues one step's work; nothing is read back from the device
  void settle_steps();  // reads the queued steps' outcomes (log steps, checkpoints, the end)
  void report_nonfinite(const StepOutcome& o);
  StepProfiler make_profiler() const;
  void log_step();
  void evaluate(bool final_eval);
  bool should_stop_early();
  void resume();
  void record_config();
  void warn_about_changes() const;
  void refuse_another_model(const CheckpointData& ckpt, const TrainState& saved) const;
  void check_ranks_resumed_alike();
  void log_memory_per_rank() const;
  NamedComponents components();  // what a checkpoint holds (run/checkpoint_writer.h)

  Config cfg_;
  TrainOptions opt_;
  std::filesystem::path run_dir_;
  at::Device device_ = at::kCPU;
  DistEnv dist_;
  std::unique_ptr<Communicator> comm_;  // null in a one-process run
  std::unique_ptr<GradReducer> reducer_;
  std::unique_ptr<OwnedParameterSync> param_sync_;  // ZeRO-1 only
  std::unique_ptr<StopVote> stop_vote_;             // preemption, agreed on by every rank
  std::unique_ptr<RunLock> lock_;
  std::unique_ptr<BatchLoader> train_loader_, val_loader_;
  std::unique_ptr<BatchPrefetcher> train_batches_;  // train_loader_, read ahead
  std::shared_ptr<LanguageModel> model_;
  std::unique_ptr<ModuleState> model_state_;
  std::unique_ptr<AdamW> optimizer_;
  std::unique_ptr<Checkpointer> checkpointer_;
  std::unique_ptr<MetricsLog> metrics_;
  std::unique_ptr<TrainProgress> progress_;
  TrainState state_;
  CpuRngState rng_;
  PendingOutcomes outcomes_;
  std::vector<at::Tensor> kept_batches_;  // train.debug_nonfinite: the last step's batches
  double last_loss_ = 0.0, last_grad_norm_ = 0.0, last_lr_ = 0.0;
  int64_t run_start_step_ = 0;  // since this process started (--stop-after)
  std::optional<EvalResult> last_eval_;
};

}  // namespace ember
