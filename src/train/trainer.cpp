#include "ember/train/trainer.h"

#include <torch/cuda.h>
#include "ember/util/log.h"

#include <cmath>

#include "ember/model/autocast.h"
#include "ember/train/lr_schedule.h"
#include "ember/train/peak_flops.h"
#include "ember/train/preemption.h"
#include "ember/util/error.h"
#include "ember/util/files.h"
#include "ember/util/progress.h"

namespace ember {
namespace {

at::Device pick_device(DeviceChoice want) {
  if (want == DeviceChoice::cuda && !torch::cuda::is_available())
    throw ConfigError("train.device: 'cuda' requested but no CUDA device is available");
  if (want == DeviceChoice::cuda || (want == DeviceChoice::automatic && torch::cuda::is_available())) return at::kCUDA;
  return at::kCPU;
}

}  // namespace

std::filesystem::path run_dir_of(const Config& cfg, const TrainOptions& opt) {
  return opt.run_dir.empty() ? fs::path(cfg.log.dir) / cfg.log.name : fs::path(opt.run_dir);
}

Trainer::Trainer(Config cfg, TrainOptions opt) : cfg_(std::move(cfg)), opt_(std::move(opt)) {
  run_dir_ = run_dir_of(cfg_, opt_);
  device_ = pick_device(cfg_.train.device);
  if (cfg_.train.threads > 0) at::set_num_threads(static_cast<int>(cfg_.train.threads));
}

Trainer::~Trainer() {
  if (lock_) log::remove_file_sink(run_dir_ / "train.log");
}

void Trainer::open_data() {
  LoaderOptions o;
  o.batch = cfg_.train.micro_batch;
  o.seq_len = cfg_.train.seq_len;
  o.seed = static_cast<uint64_t>(cfg_.train.seed);
  train_loader_ = open_loader(cfg_.data.train, "data.train", o, cfg_.model.vocab_size);
  if (!cfg_.data.val.empty()) {
    o.shuffle = false;
    val_loader_ = open_loader(cfg_.data.val, "data.val", o, cfg_.model.vocab_size);
  }
}

void Trainer::open_run_dir() {
  lock_ = std::make_unique<RunLock>(run_dir_);  // before anything in the run directory changes
  log::add_file_sink(run_dir_ / "train.log");   // every console line also goes to the run
  checkpointer_ = std::make_unique<Checkpointer>(run_dir_, cfg_.checkpoint.keep);
  const bool has_ckpt = fs::exists(checkpointer_->checkpoints_dir());
  if (!opt_.resume && has_ckpt)
    throw UsageError("run directory '" + run_dir_.string() +
                     "' already has checkpoints: pass --resume to continue it, or choose another "
                     "log.name / --run-dir");
  fs::create_directories(run_dir_);
  write_file_atomic(run_dir_ / "config.yaml", to_yaml(cfg_));
  metrics_ = std::make_unique<MetricsLog>(run_dir_ / "metrics.jsonl");
  if (!opt_.resume) metrics_->truncate_after(-1);
}

NamedComponents Trainer::components() {
  // The train state first: it refuses a checkpoint of another model before anything is loaded.
  return {{"train", &state_},
          {"model", model_state_.get()},
          {"optim", optimizer_.get()},
          {"loader", train_loader_.get()},
          {"rng", &rng_}};
}

void Trainer::save_checkpoint() {
  auto dir = checkpointer_->save(save_components(components()), state_.step);
  log::info("checkpoint {}", dir.string());
}

bool Trainer::train_step() {
  const int64_t accum = cfg_.train.grad_accum;
  last_lr_ = learning_rate(cfg_.optim, state_.step, cfg_.train.steps);
  double loss_sum = 0.0;
  {
    AutocastScope autocast(device_, cfg_.train.precision == Precision::bf16);
    for (int64_t micro = 0; micro < accum; ++micro) {
      auto batch = train_loader_->next().to(device_);
      const int64_t T = batch.size(1) - 1;
      auto loss = model_->loss(batch.narrow(1, 0, T), batch.narrow(1, 1, T)) / static_cast<double>(accum);
      loss.backward();
      loss_sum += loss.item<double>();
    }
  }
  last_loss_ = loss_sum;
  last_grad_norm_ = clip_grad_norm(model_->parameters(), cfg_.optim.grad_clip);
  const bool finite = std::isfinite(last_loss_) && std::isfinite(last_grad_norm_);
  if (finite) optimizer_->step(last_lr_);
  optimizer_->zero_grad();
  state_.step += 1;
  state_.tokens_seen += cfg_.train.tokens_per_step();
  if (finite) return true;
  const std::string what =
      fmt::format("non-finite {} at step {} (loss {}, grad norm {})", std::isfinite(last_loss_) ? "gradient" : "loss",
                  state_.step, last_loss_, last_grad_norm_);
  if (cfg_.train.on_nonfinite == OnNonfinite::stop)
    throw Error(what + "; lower optim.lr, or set train.on_nonfinite=skip to skip such steps");
  state_.skipped_steps += 1;
  log::warn("{}: step skipped ({} so far)", what, state_.skipped_steps);
  return false;
}

void Trainer::log_step() {
  const auto now = std::chrono::steady_clock::now();
  const double window_s = std::chrono::duration<double>(now - last_log_time_).count();
  const double session_s = std::chrono::duration<double>(now - session_start_).count();
  const int64_t steps_done = state_.step - session_start_step_;
  const double tok_s = (state_.step - last_log_step_) * cfg_.train.tokens_per_step() / std::max(window_s, 1e-9);
  const double mfu = tok_s * model_->train_flops_per_token(cfg_.train.seq_len) / peak_flops_;
  const double eta = session_s / std::max<int64_t>(steps_done, 1) * (cfg_.train.steps - state_.step);
  last_log_time_ = now;
  last_log_step_ = state_.step;
  log::info("step {:>6}/{} | loss {:.4f} | lr {:.2e} | gnorm {:.3f} | {:.0f} tok/s | MFU {:.1f}% | ETA {}", state_.step,
            cfg_.train.steps, last_loss_, last_lr_, last_grad_norm_, tok_s, 100 * mfu, format_duration(eta));
  metrics_->write({{"kind", "train"},
                   {"step", state_.step},
                   {"loss", last_loss_},
                   {"lr", last_lr_},
                   {"grad_norm", last_grad_norm_},
                   {"tokens", state_.tokens_seen},
                   {"tokens_per_s", tok_s},
                   {"mfu", mfu},
                   {"elapsed_s", state_.elapsed_s + session_s}});
}

void Trainer::evaluate(bool final_eval) {
  if (!val_loader_) return;
  model_->eval();
  last_eval_ =
      evaluate_perplexity(*model_, *val_loader_, cfg_.eval.batches, device_, cfg_.train.precision == Precision::bf16);
  model_->train();
  log::info("eval  step {:>6} | val loss {:.4f} | val ppl {:.3f}{}", state_.step, last_eval_->loss,
            last_eval_->perplexity, final_eval ? " (final)" : "");
  metrics_->write({{"kind", "eval"},
                   {"step", state_.step},
                   {"val_loss", last_eval_->loss},
                   {"val_ppl", last_eval_->perplexity},
                   {"val_tokens", last_eval_->tokens}});
}

bool Trainer::should_stop_early() const {
  return preemption_requested() || (opt_.stop_after > 0 && state_.step - session_start_step_ >= opt_.stop_after);
}

TrainSummary Trainer::run() {
  install_preemption_handlers();
  open_data();
  torch::manual_seed(static_cast<uint64_t>(cfg_.train.seed));
  model_ = std::make_shared<LanguageModel>(cfg_.model);
  model_->to(device_);
  model_->set_activation_checkpointing(cfg_.train.activation_checkpointing, cfg_.train.activation_checkpointing_k);
  model_state_ = std::make_unique<ModuleState>(*model_);
  optimizer_ = std::make_unique<AdamW>(model_->named_parameters().pairs(), cfg_.optim);
  state_.config_hash = config_hash(cfg_);
  state_.model_hash = model_hash(cfg_.model);
  open_run_dir();
  if (opt_.resume) {
    auto ckpt = checkpointer_->load_latest([](const std::string& m) { log::warn("{}", m); });
    if (ckpt) {
      restore_components(*ckpt, components());
      metrics_->truncate_after(state_.step);
      log::info("resumed from {} at step {} ({} tokens seen)", ckpt->dir.string(), state_.step, state_.tokens_seen);
    } else {
      log::warn("--resume: no complete checkpoint in '{}', starting from step 0", run_dir_.string());
    }
  }
  peak_flops_ = measure_matmul_peak(device_, cfg_.train.precision == Precision::bf16 ? at::kBFloat16 : at::kFloat);
  log::info("run {} | {} parameters | {:.3g} GFLOP/token | matmul peak {:.1f} GFLOP/s", run_dir_.string(),
            model_->num_parameters(), model_->train_flops_per_token(cfg_.train.seq_len) / 1e9, peak_flops_ / 1e9);
  session_start_ = last_log_time_ = std::chrono::steady_clock::now();
  session_start_step_ = last_log_step_ = state_.step;
  TrainSummary summary;
  model_->train();
  while (state_.step < cfg_.train.steps) {
    train_step();
    if (state_.step % cfg_.log.every == 0 || state_.step == cfg_.train.steps) log_step();
    if (cfg_.eval.every > 0 && state_.step % cfg_.eval.every == 0 && state_.step < cfg_.train.steps) evaluate(false);
    const bool stop = should_stop_early();
    if ((cfg_.checkpoint.every > 0 && state_.step % cfg_.checkpoint.every == 0) || stop ||
        state_.step == cfg_.train.steps) {
      state_.elapsed_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - session_start_).count();
      session_start_ = std::chrono::steady_clock::now();
      session_start_step_ = state_.step;
      if (state_.step == cfg_.train.steps) evaluate(true);
      save_checkpoint();
    }
    if (stop && state_.step < cfg_.train.steps) {
      log::warn("stopping at step {} (preemption): checkpoint saved, resume with --resume", state_.step);
      summary.preempted = true;
      break;
    }
  }
  summary.run_dir = run_dir_;
  summary.step = state_.step;
  summary.final_eval = last_eval_;
  return summary;
}

}  // namespace ember
