#include "ember/train/trainer.h"

#include <c10/core/impl/VirtualGuardImpl.h>
#include <fmt/ranges.h>
#include <torch/cuda.h>
#include "ember/util/log.h"

#include <cmath>
#include <thread>

#include "ember/analysis/epsilon.h"
#include "ember/data/text_encoder.h"
#include "ember/model/autocast.h"
#include "ember/distributed/stop_vote.h"
#include "ember/distributed/together.h"
#include "ember/run/checkpoint_writer.h"
#include "ember/run/run_data.h"
#include "ember/train/device_choice.h"
#include "ember/train/device_memory.h"
#include "ember/train/kernel_setup.h"
#include "ember/train/lr_schedule.h"
#include "ember/train/nonfinite_report.h"
#include "ember/train/peak_flops.h"
#include "ember/train/preemption.h"
#include "ember/util/cpus.h"
#include "ember/util/denormals.h"
#include "ember/util/error.h"
#include "ember/util/files.h"
#include "ember/util/host_memory.h"
#include "ember/util/profile_scopes.h"
#include <ATen/record_function.h>
#include "ember/util/progress.h"

namespace ember {
namespace {

// Intra-op threads: the configured number, else the cores shared among this node's ranks.
void set_threads(int64_t configured, const DistEnv& dist) {
  if (configured > 0)
    at::set_num_threads(static_cast<int>(configured));
  else if (dist.local_world > 1)
    at::set_num_threads(std::max(1, usable_cpus() / dist.local_world));
}

}  // namespace

std::filesystem::path run_dir_of(const Config& cfg, const TrainOptions& opt) {
  return opt.run_dir.empty() ? fs::path(cfg.log.dir) / cfg.log.name : fs::path(opt.run_dir);
}

Trainer::Trainer(Config cfg, TrainOptions opt) : cfg_(std::move(cfg)), opt_(std::move(opt)) {
  run_dir_ = run_dir_of(cfg_, opt_);
  dist_ = read_dist_env(process_environment());
  device_ = resolve_device(cfg_.train.device, "train.device", dist_.local_rank);
  // The rank's GPU becomes the current device, so that nothing (a library's context, NCCL's guess
  // of the device) lands on GPU 0 by default.
  if (device_.is_cuda()) c10::impl::VirtualGuardImpl(device_.type()).setDevice(device_);
  set_threads(cfg_.train.threads, dist_);
  if (device_.is_cpu()) {
    flush_denormals_on_all_threads();  // a decaying memory otherwise stalls on them
    retain_freed_host_memory();        // each step's large buffers are not re-mapped and re-zeroed
  }
}

Trainer::~Trainer() {
  if (lock_) log::remove_file_sink(run_dir_ / "train.log");
}

void Trainer::join_job() {
  if (!dist_.distributed()) return;
  if (!main_rank()) {  // rank 0 speaks for the job; the others only warn and fail
    log::set_prefix(fmt::format("[rank {}] ", dist_.rank));
    log::set_level(log::level::warn);
  }
  // auto: NCCL for ranks that train on a GPU, Gloo for CPU ranks (also on a node that has GPUs).
  auto backend = cfg_.distributed.backend;
  if (backend == Backend::automatic) backend = device_.is_cuda() ? Backend::nccl : Backend::gloo;
  ConnectOptions connect;
  connect.timeout = std::chrono::seconds(cfg_.distributed.timeout_s);
  connect.heartbeat_timeout = std::chrono::seconds(cfg_.distributed.heartbeat_timeout_s);
  connect.interface = cfg_.distributed.interface;
  comm_ = Communicator::connect(dist_, backend, connect);
  log::info("distributed: {} ranks ({} per node) over {} from {} | global batch {} x {} x {} = {} tokens/step",
            dist_.world, dist_.local_world, comm_->backend_name(), dist_.source, cfg_.train.micro_batch,
            cfg_.train.grad_accum, dist_.world, global_tokens_per_step());
}

void Trainer::together(const char* phase, const std::function<void()>& fn) {
  ember::together(comm_.get(), dist_.rank, phase, fn);
}

double Trainer::reduce_mean(double x) { return comm_ ? comm_->sum(x) / dist_.world : x; }

// A resumed run's data where it is now: it may have moved, or be relative to another directory
// (run/run_data.h). A new run's is used as written; open_data makes both absolute once they open.
void Trainer::locate_data() {
  if (!opt_.resume || !fs::exists(run_dir_ / "config.yaml")) return;
  const RunData found(run_dir_, cfg_.data);
  if (found.has_train()) cfg_.data.train = found.train("train --resume: training needs the training shards");
  if (found.has_val()) cfg_.data.val = found.val("train --resume: evaluation needs the validation shards");
}

void Trainer::open_data() {
  locate_data();
  LoaderOptions o;
  o.rank = dist_.rank;
  o.world = dist_.world;
  o.batch = cfg_.train.micro_batch;
  o.seq_len = cfg_.train.seq_len;
  o.seed = static_cast<uint64_t>(cfg_.train.seed);
  train_loader_ = open_loader(cfg_.data.train, "data.train", o, cfg_.model.vocab_size);
  train_batches_ = std::make_unique<BatchPrefetcher>(*train_loader_, cfg_.kernels.prefetch_batches, device_.is_cuda());
  if (!cfg_.data.val.empty()) {
    o.shuffle = false;
    val_loader_ = open_loader(cfg_.data.val, "data.val", o, cfg_.model.vocab_size);
    require_same_tokenizer(cfg_.data.train, "data.train", cfg_.data.val, "data.val");
  } else if (main_rank()) {
    log::info("no validation set (data.val is empty): the run evaluates nothing");
  }
  cfg_.data = absolute_data_paths(cfg_.data, fs::current_path());  // config.yaml names them from anywhere
}

void Trainer::open_run_dir() {
  checkpointer_ = std::make_unique<Checkpointer>(run_dir_, cfg_.checkpoint.keep);
  const bool has_ckpt = fs::exists(checkpointer_->checkpoints_dir());
  if (!opt_.resume && has_ckpt)
    throw UsageError("run directory '" + run_dir_.string() +
                     "' already has checkpoints: pass --resume to continue it, or choose another "
                     "log.name / --run-dir");
  if (!main_rank()) return;                     // rank 0 alone writes the run directory
  lock_ = std::make_unique<RunLock>(run_dir_);  // before anything in the run directory changes
  log::add_file_sink(run_dir_ / "train.log");   // every console line also goes to the run
  fs::create_directories(run_dir_);
  metrics_ = std::make_unique<MetricsLog>(run_dir_ / "metrics.jsonl",
                                          cfg_.log.tensorboard ? run_dir_ / "tensorboard" : fs::path());
  if (!opt_.resume) metrics_->truncate_after(-1);
}

NamedComponents Trainer::components() {
  // The train state first: it refuses a checkpoint of another model before anything is loaded.
  return {{"train", &state_},
          {"model", model_state_.get()},
          {"loader", train_batches_.get()},
          {"rng", &rng_},
          {"optim", optimizer_.get()}};
}

void Trainer::save_checkpoint() {
  settle_steps();  // the skipped-step count is part of the train state
  const auto dir =
      write_checkpoint(*checkpointer_, components(), state_.step, {dist_.rank, dist_.world, comm_.get()});
  if (main_rank()) log::info("checkpoint {}", dir.string());
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

// The matmul throughput of the device in the training precision, MFU's denominator.
double Trainer::measure_peak() const {
  return measure_matmul_peak(device_, cfg_.train.precision == Precision::bf16 ? at::kBFloat16 : at::kFloat);
}

// Training faster than the matmul peak means the start-up measurement ran on a busy machine:
// measure again and keep the larger (the time it takes stays out of the next window's tokens/s).
void Trainer::remeasure_peak() {
  peak_remeasured_ = true;  // once: a model faster than its matmuls is reported as it is
  const double again = measure_peak();
  if (again > peak_flops_) {
    log::info("matmul peak measured again: {:.1f} GFLOP/s (at the start: {:.1f})", again / 1e9, peak_flops_ / 1e9);
    peak_flops_ = again;
  }
  last_log_time_ = std::chrono::steady_clock::now();
}

void Trainer::log_step() {
  settle_steps();
  const auto now = std::chrono::steady_clock::now();
  const double window_s = std::chrono::duration<double>(now - last_log_time_).count();
  const double session_s = std::chrono::duration<double>(now - session_start_).count();
  const int64_t steps_done = state_.step - session_start_step_;
  const double tok_s = (state_.step - last_log_step_) * global_tokens_per_step() / std::max(window_s, 1e-9);
  const double flops_s = tok_s / dist_.world * model_->train_flops_per_token(cfg_.train.seq_len);
  const double eta = session_s / std::max<int64_t>(steps_done, 1) * (cfg_.train.steps - state_.step);
  const int64_t window_steps = std::max<int64_t>(state_.step - last_log_step_, 1);
  const double comm_wait_s = reducer_ ? (reducer_->stats().wait_s - last_comm_wait_s_) / window_steps : 0.0;
  if (reducer_) last_comm_wait_s_ = reducer_->stats().wait_s;
  last_log_time_ = now;
  last_log_step_ = state_.step;
  if (!main_rank()) return;
  const auto peak_mem = device_peak_memory(device_);  // before a probe could add to it
  if (flops_s > peak_flops_ && !peak_remeasured_) remeasure_peak();
  const double mfu = flops_s / peak_flops_;  // attention FLOPs in full (PaLM's convention); mfu_causal halves them
  const double mfu_causal = mfu * model_->causal_train_flops_per_token(cfg_.train.seq_len) /
                            model_->train_flops_per_token(cfg_.train.seq_len);
  constexpr double gib = 1024.0 * 1024.0 * 1024.0;
  log::info("step {:>6}/{} | loss {:.4f} | lr {:.2e} | gnorm {:.3f} | {:.0f} tok/s | MFU {:.1f}%{} | ETA {}",
            state_.step, cfg_.train.steps, last_loss_, last_lr_, last_grad_norm_, tok_s, 100 * mfu,
            peak_mem ? fmt::format(" | peak mem {:.1f} GiB", peak_mem->allocated_bytes / gib) : "",
            format_duration(eta));
  nlohmann::json record{{"kind", "train"},
                        {"step", state_.step},
                        {"loss", last_loss_},
                        {"lr", last_lr_},
                        {"grad_norm", last_grad_norm_},
                        {"tokens", state_.tokens_seen},
                        {"tokens_per_s", tok_s},
                        {"mfu", mfu},
                        {"mfu_causal", mfu_causal},
                        {"comm_wait_s", comm_wait_s},  // per step: the all-reduce time backward did not hide
                        {"comm_allreduce_s", comm_unoverlapped_s_},  // the same all-reduce alone, measured at start
                        {"elapsed_s", state_.elapsed_s + session_s}};
  if (peak_mem) {  // since the start of this session, on this rank's GPU
    record["device_peak_allocated_gib"] = peak_mem->allocated_bytes / gib;
    record["device_peak_reserved_gib"] = peak_mem->reserved_bytes / gib;
  }
  metrics_->write(record);
}

void Trainer::evaluate(bool final_eval) {
  if (!val_loader_) return;
  model_->eval();
  auto r =
      evaluate_perplexity(*model_, *val_loader_, cfg_.eval.batches, device_, cfg_.train.precision == Precision::bf16);
  if (comm_) {  // each rank evaluated its own slice of every batch: token-weighted mean over all
    const auto sums =
        comm_->sum(std::vector<double>{r.loss * static_cast<double>(r.tokens), static_cast<double>(r.tokens)});
    r.tokens = static_cast<int64_t>(sums[1]);
    r.loss = sums[0] / std::max(sums[1], 1.0);
    r.perplexity = std::exp(r.loss);
  }
  last_eval_ = r;
  model_->train();
  if (!main_rank()) return;
  log::info("eval  step {:>6} | val loss {:.4f} | val ppl {:.3f}{}", state_.step, last_eval_->loss,
            last_eval_->perplexity, final_eval ? " (final)" : "");
  metrics_->write({{"kind", "eval"},
                   {"step", state_.step},
                   {"val_loss", last_eval_->loss},
                   {"val_ppl", last_eval_->perplexity},
                   {"val_tokens", last_eval_->tokens}});
}

void Trainer::log_geometry() {
  if (!main_rank()) return;
  at::NoGradGuard no_grad;
  EpsilonOptions o;
  o.method = EpsilonMethod::sampled;
  o.sample_pairs = cfg_.eval.capacity_pairs;
  o.seed = static_cast<uint64_t>(state_.step);
  nlohmann::json record = {{"kind", "capacity"},
                           {"step", state_.step},
                           {"method", "sampled"},
                           {"pairs", cfg_.eval.capacity_pairs},
                           {"tied", model_->embedding().tied_table().defined()}};  // the head reuses the table
  std::string line;
  const std::pair<const char*, at::Tensor> matrices[] = {{"input", model_->embedding().materialize()},
                                                         {"head", model_->head_weight()}};
  for (const auto& [name, matrix] : matrices) {
    const auto e = estimate_epsilon(unit_rows(matrix.detach().to(at::kCPU, at::kFloat), name), o);
    record[std::string(name) + "_epsilon"] = e.epsilon();  // docs/capacity.md: eps = mu + 2 sigma
    record[std::string(name) + "_mu"] = e.mu;
    record[std::string(name) + "_sigma"] = e.sigma;
    record[std::string(name) + "_epsilon_ci"] = {e.ci_low, e.ci_high};
    line += fmt::format(" | {} eps {:.4f} (mu {:.4f}, sigma {:.4f})", name, e.epsilon(), e.mu, e.sigma);
  }
  log::info("geometry step {:>6}{} | sampled, {} pairs", state_.step, line, cfg_.eval.capacity_pairs);
  metrics_->write(record);
}

bool Trainer::should_stop_early() {
  // SIGTERM reaches one rank or all; every rank must stop at the same step: a vote read a few steps
  // later, with no wait inside a step (distributed/stop_vote.h). --stop-after is the same on every rank.
  const bool stop_after = opt_.stop_after > 0 && state_.step - run_start_step_ >= opt_.stop_after;
  return stop_vote_->cast(preemption_requested()) || stop_after;
}

void Trainer::build_model() {
  torch::manual_seed(static_cast<uint64_t>(cfg_.train.seed));
  model_ = std::make_shared<LanguageModel>(cfg_.model);
  model_->to(device_);
  model_->set_activation_checkpointing(cfg_.train.activation_checkpointing, cfg_.train.activation_checkpointing_k);
  if (comm_) {  // one seed makes equal models; the broadcast makes sure of it
    std::vector<at::Tensor> state;
    for (const auto& p : model_->parameters()) state.push_back(p.detach());
    for (const auto& b : model_->buffers()) state.push_back(b);
    comm_->broadcast(state, 0);
    reducer_ = std::make_unique<GradReducer>(model_->parameters(), *comm_, cfg_.distributed.bucket_bytes(),
                                             cfg_.distributed.grad_comm == GradComm::bf16);
    comm_unoverlapped_s_ = reducer_->time_unoverlapped(3);
    log::info(
        "distributed: {} gradient buckets of <= {} MB in {} ({:.1f} MB per step; {:.1f} ms to all-reduce "
        "them without overlap)",
        reducer_->stats().buckets, cfg_.distributed.bucket_mb,
        cfg_.distributed.grad_comm == GradComm::bf16 ? "bf16" : "fp32", reducer_->stats().bytes / 1048576.0,
        1e3 * comm_unoverlapped_s_);
  }
  model_state_ = std::make_unique<ModuleState>(*model_);
  auto named = model_->named_parameters().pairs();
  if (comm_ && cfg_.distributed.zero == 1) {
    std::vector<int64_t> numels;
    for (const auto& [name, p] : named) numels.push_back(p.numel());
    const auto owners = assign_owners(numels, dist_.world);
    param_sync_ = std::make_unique<OwnedParameterSync>(model_->parameters(), owners, *comm_);
    NamedParameters mine;
    for (size_t k = 0; k < named.size(); ++k)
      if (owners[k] == dist_.rank) mine.push_back(named[k]);
    named = mine;
  }
  optimizer_ = std::make_unique<AdamW>(named, cfg_.optim, param_sync_ ? StateScope::per_rank : StateScope::shared);
}

void Trainer::log_memory_per_rank() const {
  int64_t params = 0, owned = 0;
  for (const auto& p : model_->parameters()) params += p.numel() * p.element_size();
  for (const auto& [name, t] : optimizer_->state_tensors()) owned += t.numel() * t.element_size();
  const double mb = 1024.0 * 1024.0;
  log::info("memory per rank: parameters {:.1f} MB, gradients {:.1f} MB, AdamW state {:.1f} MB{}{}", params / mb,
            params / mb, owned / mb, param_sync_ ? fmt::format(" (ZeRO-1: this rank's shard of {})", dist_.world) : "",
            reducer_ ? fmt::format(", gradient buckets {:.1f} MB", reducer_->stats().bytes / mb) : "");
}

// config.yaml is the config the checkpoints were trained with until a resume is accepted, so a
// refused one (another model) leaves the run as it was; data.json records where its data is.
void Trainer::record_config() {
  if (!main_rank()) return;
  write_file_atomic(run_dir_ / "config.yaml", to_yaml(cfg_));
  write_run_data(run_dir_, describe_run_data(cfg_.data));
}

// A checkpoint of another model is refused before anything loads, naming the model.* keys that
// differ from the run's config.yaml.
void Trainer::refuse_another_model(const CheckpointData& ckpt, const TrainState& saved) const {
  if (saved.model_hash == state_.model_hash) return;
  std::string keys;
  if (fs::exists(run_dir_ / "config.yaml")) {
    const auto changed = changed_keys(read_text_file(run_dir_ / "config.yaml"), to_yaml(cfg_), "model");
    if (!changed.empty()) keys = fmt::format(" ({})", fmt::join(changed, "; "));
  }
  throw CheckpointError(ckpt.where() + " was trained with a different model config" + keys +
                        "; resume needs the same model.* keys (or another --run-dir for a new run)");
}

// Resuming with other train / optim / data keys is allowed (a longer run, another learning rate)
// but never silent: train.steps stretches the schedule, a smaller one trains nothing.
void Trainer::warn_about_changes() const {
  if (!main_rank()) return;  // once per job
  if (fs::exists(run_dir_ / "config.yaml")) {
    const auto old_yaml = read_text_file(run_dir_ / "config.yaml"), new_yaml = to_yaml(cfg_);
    for (const char* section : {"train", "optim", "data"})
      for (const auto& change : changed_keys(old_yaml, new_yaml, section))
        log::warn("resuming with a changed {} (the schedule and data order follow the new value)", change);
  }
  if (state_.step >= cfg_.train.steps)
    log::warn("the run is at step {} and train.steps = {}: nothing to train (raise train.steps to continue)",
              state_.step, cfg_.train.steps);
}

void Trainer::resume() {
  if (!opt_.resume) return;
  auto ckpt = checkpointer_->load_latest([](const std::string& m) { log::warn("{}", m); });
  if (!ckpt) {
    log::warn("--resume: no complete checkpoint in '{}', starting from step 0", run_dir_.string());
    return;
  }
  std::optional<TrainState> saved;
  if (ckpt->components.count("train")) {
    saved = TrainState::from_json(ckpt->component("train").json, ckpt->where());
    refuse_another_model(*ckpt, *saved);
  }
  if (saved && saved->weights_only) {
    // Imported weights (ember import): the model alone; AdamW, the data order and the RNG start afresh.
    restore_components(*ckpt, {{"train", &state_}, {"model", model_state_.get()}});
    state_.weights_only = false;
    if (metrics_) metrics_->truncate_after(state_.step);  // records of an earlier attempt go
    log::info("starting from the weights of {} ({}): new optimizer state, data from the start", ckpt->dir.string(),
              state_.origin.empty() ? "no origin recorded" : state_.origin);
    return;
  }
  restore_components(*ckpt, components());  // every rank reads the same checkpoint
  if (metrics_) metrics_->truncate_after(state_.step);
  log::info("resumed from {} at step {} ({} tokens seen)", ckpt->dir.string(), state_.step, state_.tokens_seen);
  warn_about_changes();
  if (state_.saved_world != state_.world)  // data parallel: every rank holds the whole state
    log::warn(
        "resuming a checkpoint of {} rank(s) with {}: the data order continues from the same window, "
        "sliced for the new world size",
        state_.saved_world, state_.world);
}

// Each rank reads the run directory itself: ranks that found different checkpoints (a directory on
// node-local disks, a copy behind) would average gradients of different models. Refused.
void Trainer::check_ranks_resumed_alike() {
  if (!comm_) return;
  std::vector<double> steps(static_cast<size_t>(dist_.world), 0.0);
  steps[static_cast<size_t>(dist_.rank)] = static_cast<double>(state_.step);
  steps = comm_->sum(steps);
  for (int r = 1; r < dist_.world; ++r)
    if (steps[static_cast<size_t>(r)] != steps[0])
      throw Error(
          fmt::format("resuming: rank 0 starts at step {} but rank {} at step {}; every rank must see the "
                      "same run directory '{}' (on several nodes, a shared filesystem)",
                      steps[0], r, steps[static_cast<size_t>(r)], run_dir_.string()));
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

TrainSummary Trainer::run() {
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
  peak_flops_ = measure_peak();
  reset_device_peak_memory(device_);  // the peak reported is training's, not the probe's
  log::info("run {} | {} parameters | {:.3g} GFLOP/token (attention in full; causal-halved {:.3g}) | matmul peak "
            "{:.1f} GFLOP/s",
            run_dir_.string(), model_->num_parameters(), model_->train_flops_per_token(cfg_.train.seq_len) / 1e9,
            model_->causal_train_flops_per_token(cfg_.train.seq_len) / 1e9, peak_flops_ / 1e9);
  session_start_ = last_log_time_ = std::chrono::steady_clock::now();
  session_start_step_ = last_log_step_ = run_start_step_ = state_.step;
  stop_vote_ = std::make_unique<StopVote>(comm_.get());
  TrainSummary summary;
  model_->train();
  StepProfiler profiler = make_profiler();
  while (state_.step < cfg_.train.steps) {
    profiler.before_step(state_.step + 1);
    train_step();
    if (state_.step % cfg_.log.every == 0 || state_.step == cfg_.train.steps) log_step();
    profiler.after_step(state_.step);
    if (cfg_.eval.every > 0 && state_.step % cfg_.eval.every == 0 && state_.step < cfg_.train.steps) evaluate(false);
    if (cfg_.eval.capacity_every > 0 && state_.step % cfg_.eval.capacity_every == 0) log_geometry();
    const bool stop = should_stop_early();
    if ((cfg_.checkpoint.every > 0 && state_.step % cfg_.checkpoint.every == 0) || stop ||
        state_.step == cfg_.train.steps) {
      state_.elapsed_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - session_start_).count();
      session_start_ = std::chrono::steady_clock::now();
      session_start_step_ = state_.step;
      if (state_.step == cfg_.train.steps) evaluate(true);
      if (state_.step < cfg_.train.steps || cfg_.checkpoint.final) save_checkpoint();
    }
    if (stop && state_.step < cfg_.train.steps) {
      if (main_rank())
        log::warn("stopping at step {} (preemption): checkpoint saved, resume with --resume", state_.step);
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
