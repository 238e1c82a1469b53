// The trainer's checkpoints: what one holds, saving it, and resuming from one (refusing another
// model's, warning of changed keys, checking every rank found the same), and config.yaml.
#include "ember/train/trainer.h"

#include <fmt/ranges.h>

#include "ember/run/checkpoint_writer.h"
#include "ember/run/run_data.h"
#include "ember/util/error.h"
#include "ember/util/files.h"
#include "ember/util/log.h"

namespace ember {

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

}  // namespace ember
