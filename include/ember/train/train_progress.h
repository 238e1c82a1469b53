// The progress line and metrics.jsonl's train records: tokens/s over the window since the last
// line, ETA over the session, MFU against the matmul peak measured at start (attention FLOPs in
// full, PaLM's convention; `mfu_causal` halves causal attention's), the device's peak memory and
// the all-reduce time backward did not hide.
#pragma once
#include <ATen/Tensor.h>

#include <chrono>
#include <cstdint>

#include "ember/distributed/grad_reducer.h"
#include "ember/train/metrics_log.h"
#include "ember/train/peak_cache.h"

namespace ember {

struct ProgressRates {
  double flops_per_token = 0.0;         // LanguageModel::train_flops_per_token
  double causal_flops_per_token = 0.0;  // LanguageModel::causal_train_flops_per_token
  int64_t global_tokens_per_step = 0;   // every rank's tokens of one optimizer step
  int world = 1;
};

// One logged step as the trainer saw it.
struct StepReport {
  int64_t step = 0, total_steps = 0, tokens_seen = 0;
  double loss = 0.0, lr = 0.0, grad_norm = 0.0;
  double elapsed_before_s = 0.0;  // training time of earlier sessions (the train state's)
};

class TrainProgress {
 public:
  TrainProgress(at::Device device, bool bf16, ProgressRates rates);
  // MFU's denominator, in the training precision: the cached peak, or measured now (train/peak_cache.h).
  MatmulPeak set_peak(bool measure_now);
  void start_session(int64_t step);  // tokens/s and ETA count from here
  double lap_session(int64_t step);  // seconds since the session started, which restarts here
  void watch_communication(const GradReducer* reducer, double unoverlapped_s);
  // Every rank moves its window; the main rank (metrics set) prints the line and writes the record.
  void report(const StepReport& r, MetricsLog* metrics);

 private:
  void remeasure_peak();

  at::Device device_;
  bool bf16_;
  ProgressRates rates_;
  double peak_flops_ = 0.0;
  bool peak_remeasured_ = false;
  const GradReducer* reducer_ = nullptr;
  double comm_unoverlapped_s_ = 0.0, last_comm_wait_s_ = 0.0;
  int64_t session_start_step_ = 0, last_log_step_ = 0;
  std::chrono::steady_clock::time_point session_start_, last_log_time_;
};

}  // namespace ember
