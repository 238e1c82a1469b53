#include "ember/train/trainer.h"

#include <fmt/format.h>

#include <cmath>

#include "ember/model/autocast.h"
#include "ember/train/device_memory.h"
#include "ember/train/kernel_setup.h"
#include "ember/train/lr_schedule.h"
#include "ember/train/nonfinite_report.h"
#include "ember/train/preemption.h"
#include "ember/train/run_eval.h"
#include "ember/util/error.h"
#include "ember/util/files.h"
#include "ember/util/log.h"
#include "ember/util/profile_scopes.h"
#include <ATen/record_function.h>

namespace ember {

std::filesystem::path run_dir_of(const Config& cfg, const TrainOptions& opt) {
  return opt.run_dir.empty() ? fs::path(cfg.log.dir) / cfg.log.name : fs::path(opt.run_dir);
}

void Trainer::train_step() {
  const int64_t accum = cfg_.train.grad_accum;
  last_lr_ = learning_rate(cfg_.optim, state_.step, cfg_.train.steps);
  auto loss_sum = at::zeros({}, at::TensorOptions().dtype(at::kDouble).device(device_));  // as a host double was
  kept_batches_.clear();  // train.debug_nonfinite: the step's batches, for a replay
  for (int64_t micro = 0; micro < accum; ++micro) {
    // Pinned on CUDA (data/batch_prefetcher.h), so the copy does not wait for the host.
    auto batch = train_batches_->next().to(device_, at::kLong, /*non_blocking=*/true);
    if (cfg_.train.debug_nonfinite) kept_batches_.push_back(batch);
    const int64_t T = batch.size(1) - 1;
    at::Tensor loss;
    {  // the forward under autocast, backward after it (as PyTorch recommends: backward ops run in
       // the dtypes their forward chose)
      AutocastScope autocast(device_, cfg_.train.precision == Precision::bf16);
      loss = model_->training_loss(batch.narrow(1, 0, T), batch.narrow(1, 1, T), 1.0 / static_cast<double>(accum));
    }
    if (reducer_) reducer_->begin_micro_step(micro == accum - 1);  // communicate on the last only
    loss.backward();
    loss_sum.add_(loss.detach());  // on the device: read back only when logged
  }
  if (comm_) {
    RECORD_USER_SCOPE(kCommunicationScope);
    reducer_->finish();  // gradients now the mean over ranks: the norm below is global
    comm_->all_reduce_sum(loss_sum);  // non-finite on any rank is non-finite on all
    loss_sum.div_(dist_.world);
  }
  at::Tensor grad_norm, nonfinite;
  {
    RECORD_USER_SCOPE(kOptimizerScope);
    grad_norm = global_grad_norm_tensor(model_->parameters());
    nonfinite = nonfinite_flag(loss_sum, grad_norm);
    // Clipped inside the fused pass; a non-finite step changes nothing (found_inf), on every rank.
    optimizer_->step(last_lr_, clip_divisor(grad_norm, cfg_.optim.grad_clip), nonfinite);
  }
  if (param_sync_) {
    RECORD_USER_SCOPE(kCommunicationScope);
    param_sync_->sync();  // ZeRO-1: owners send their (possibly unchanged) parameters
  }
  for (auto& p : model_->parameters()) p.mutable_grad() = at::Tensor();  // all: ZeRO-1 steps only its own
  state_.step += 1;
  state_.tokens_seen += global_tokens_per_step();
  outcomes_.add(state_.step, loss_sum, grad_norm, nonfinite);
  if (cfg_.train.debug_nonfinite) settle_steps();  // the replay needs this step's batches
}

// Reads the pending steps' losses and norms from the device: the last one is what the log shows,
// each non-finite one stops the run or is counted as skipped (train.on_nonfinite).
void Trainer::settle_steps() {
  for (const auto& o : outcomes_.take()) {
    last_loss_ = o.loss;
    last_grad_norm_ = o.grad_norm;
    if (!o.finite) report_nonfinite(o);
  }
}

void Trainer::report_nonfinite(const StepOutcome& o) {
  std::string what = fmt::format("non-finite {} at step {} (loss {}, grad norm {})",
                                 std::isfinite(o.loss) ? "gradient" : "loss", o.step, o.loss, o.grad_norm);
  if (cfg_.train.debug_nonfinite) {
    auto dir = run_dir_ / "nonfinite" / fmt::format("step_{}", o.step);
    if (dist_.world > 1) dir /= fmt::format("rank_{}", dist_.rank);
    what += "; first non-finite tensor: " +
            investigate_nonfinite(*model_, kept_batches_, {device_, cfg_.train.precision == Precision::bf16}, dir);
  }
  if (cfg_.train.on_nonfinite == OnNonfinite::stop)
    throw Error(what + "; lower optim.lr, or set train.on_nonfinite=skip to skip such steps");
  state_.skipped_steps += 1;
  log::warn("{}: step skipped ({} so far)", what, state_.skipped_steps);
}

bool Trainer::should_stop_early() {
  // SIGTERM reaches one rank or all; every rank must stop at the same step: a vote read a few steps
  // later, with no wait inside a step (distributed/stop_vote.h). --stop-after is the same on every rank.
  const bool stop_after = opt_.stop_after > 0 && state_.step - run_start_step_ >= opt_.stop_after;
  return stop_vote_->cast(preemption_requested()) || stop_after;
}

// --profile: every rank records its own steps (profile/, or profile/rank_<r> with several ranks).
StepProfiler Trainer::make_profiler() const {
  const auto& steps = opt_.profile;
  if (steps.enabled() && steps.first <= state_.step)
    log::warn("--profile {}:{}: the run is already at step {}; nothing is recorded", steps.first, steps.last,
              state_.step);
  if (steps.enabled() && steps.last > cfg_.train.steps)
    log::warn("--profile {}:{}: the run ends at step {} (train.steps); nothing is recorded", steps.first, steps.last,
              cfg_.train.steps);
  auto dir = run_dir_ / "profile";
  if (dist_.world > 1) dir /= fmt::format("rank_{}", dist_.rank);
  return StepProfiler(steps, dir, device_);
}

void Trainer::log_step() {
  settle_steps();
  progress_->report({state_.step, cfg_.train.steps, state_.tokens_seen, last_loss_, last_lr_, last_grad_norm_,
                  state_.elapsed_s},
                 main_rank() ? metrics_.get() : nullptr);
}

void Trainer::evaluate(bool final_eval) {
  if (!val_loader_) return;
  last_eval_ = evaluate_across_ranks(*model_, *val_loader_, cfg_.eval.batches, device_,
                                     cfg_.train.precision == Precision::bf16, comm_.get());
  if (main_rank()) log_eval(*last_eval_, state_.step, final_eval, *metrics_);
}

// Everything before the first step: the job, the data, the model, the run directory, a resume, the
// kernels' choice and the matmul peak, with every rank failing together if one does.
void Trainer::set_up() {
  install_preemption_handlers();
  join_job();
  together("loading data", [&] { open_data(); });
  build_model();
  state_.config_hash = config_hash(cfg_);
  state_.model_hash = model_hash(cfg_.model);
  state_.world = dist_.world;
  together("opening the run directory", [&] { open_run_dir(); });
  together("resuming", [&] { resume(); });
  check_ranks_resumed_alike();
  const auto kernels = set_up_kernels(cfg_.kernels, device_, cfg_.train.precision == Precision::bf16, comm_.get(),
                                      opt_.resume ? state_.kernels : nlohmann::json());
  state_.kernels = kernels.record;
  if (main_rank() && !kernels.table.is_null())  // the check behind auto's choices, beside the config
    write_file_atomic(run_dir_ / "kernels.json", kernels.table.dump(2) + "\n");
  record_config();
  log_memory_per_rank();
  const auto peak = progress_->set_peak(opt_.measure_peak);
  reset_device_peak_memory(device_);  // the peak reported is training's, not the probe's
  log::info("run {} | {} parameters | {:.3g} GFLOP/token (attention in full; causal-halved {:.3g}) | matmul peak "
            "{:.1f} GFLOP/s ({})",
            run_dir_.string(), model_->num_parameters(), model_->train_flops_per_token(cfg_.train.seq_len) / 1e9,
            model_->causal_train_flops_per_token(cfg_.train.seq_len) / 1e9, peak.flops / 1e9, peak.source);
  progress_->start_session(state_.step);
  run_start_step_ = state_.step;
  stop_vote_ = std::make_unique<StopVote>(comm_.get());
}

// After each step (and its progress line): evaluations and checkpoints at their cadence. True when
// the run stops early (preemption, --stop-after) with its checkpoint saved.
bool Trainer::after_step() {
  if (cfg_.eval.every > 0 && state_.step % cfg_.eval.every == 0 && state_.step < cfg_.train.steps) evaluate(false);
  if (cfg_.eval.capacity_every > 0 && state_.step % cfg_.eval.capacity_every == 0 && main_rank())
    log_geometry(*model_, state_.step, cfg_.eval.capacity_pairs, *metrics_);
  const bool stop = should_stop_early();
  if ((cfg_.checkpoint.every > 0 && state_.step % cfg_.checkpoint.every == 0) || stop ||
      state_.step == cfg_.train.steps) {
    state_.elapsed_s += progress_->lap_session(state_.step);
    if (state_.step == cfg_.train.steps) evaluate(true);
    if (state_.step < cfg_.train.steps || cfg_.checkpoint.final) save_checkpoint();
  }
  if (!stop || state_.step >= cfg_.train.steps) return false;
  if (main_rank()) log::warn("stopping at step {} (preemption): checkpoint saved, resume with --resume", state_.step);
  return true;
}

TrainSummary Trainer::run() {
  set_up();
  TrainSummary summary;
  model_->train();
  StepProfiler profiler = make_profiler();
  while (state_.step < cfg_.train.steps) {
    profiler.before_step(state_.step + 1);
    train_step();
    if (state_.step % cfg_.log.every == 0 || state_.step == cfg_.train.steps) log_step();
    profiler.after_step(state_.step);
    if (after_step()) {
      summary.preempted = true;
      break;
    }
  }
  stop_vote_->drain();  // every rank reads the votes still in flight (the same number on each)
  settle_steps();
  summary.run_dir = run_dir_;
  summary.main_rank = main_rank();
  summary.step = state_.step;
  summary.final_eval = last_eval_;
  return summary;
}

}  // namespace ember
