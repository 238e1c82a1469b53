// The trainer's set-up: the process (threads, denormals), the job, the data, the model with its
// optimizer and gradient communication, and the run directory.
#include "ember/train/trainer.h"

#include <c10/core/impl/VirtualGuardImpl.h>
#include <fmt/format.h>

#include "ember/distributed/together.h"
#include "ember/run/run_data.h"
#include "ember/train/device_choice.h"
#include "ember/util/cpus.h"
#include "ember/util/denormals.h"
#include "ember/util/error.h"
#include "ember/util/files.h"
#include "ember/util/host_memory.h"
#include "ember/util/log.h"

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

void Trainer::build_model() {
  torch::manual_seed(static_cast<uint64_t>(cfg_.train.seed));
  model_ = std::make_shared<LanguageModel>(cfg_.model);
  model_->to(device_);
  model_->set_activation_checkpointing(cfg_.train.activation_checkpointing, cfg_.train.activation_checkpointing_k);
  progress_ = std::make_unique<TrainProgress>(
      device_, cfg_.train.precision == Precision::bf16,
      ProgressRates{model_->train_flops_per_token(cfg_.train.seq_len),
                    model_->causal_train_flops_per_token(cfg_.train.seq_len), global_tokens_per_step(), dist_.world});
  if (comm_) {  // one seed makes equal models; the broadcast makes sure of it
    std::vector<at::Tensor> state;
    for (const auto& p : model_->parameters()) state.push_back(p.detach());
    for (const auto& b : model_->buffers()) state.push_back(b);
    comm_->broadcast(state, 0);
    reducer_ = std::make_unique<GradReducer>(model_->parameters(), *comm_, cfg_.distributed.bucket_bytes(),
                                             cfg_.distributed.grad_comm == GradComm::bf16);
    const double unoverlapped_s = reducer_->time_unoverlapped(3);
    progress_->watch_communication(reducer_.get(), unoverlapped_s);
    log::info(
        "distributed: {} gradient buckets of <= {} MB in {} ({:.1f} MB per step; {:.1f} ms to all-reduce "
        "them without overlap)",
        reducer_->stats().buckets, cfg_.distributed.bucket_mb,
        cfg_.distributed.grad_comm == GradComm::bf16 ? "bf16" : "fp32", reducer_->stats().bytes / 1048576.0,
        1e3 * unoverlapped_s);
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

}  // namespace ember
