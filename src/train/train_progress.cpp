#include "ember/train/train_progress.h"

#include "ember/train/device_memory.h"
#include "ember/train/peak_flops.h"
#include "ember/util/log.h"
#include "ember/util/progress.h"

namespace ember {

TrainProgress::TrainProgress(at::Device device, bool bf16, ProgressRates rates)
    : device_(device), bf16_(bf16), rates_(rates) {}

MatmulPeak TrainProgress::set_peak(bool measure_now) {
  auto peak = matmul_peak(device_, bf16_ ? at::kBFloat16 : at::kFloat, measure_now);
  peak_flops_ = peak.flops;
  return peak;
}

void TrainProgress::start_session(int64_t step) {
  session_start_ = last_log_time_ = std::chrono::steady_clock::now();
  session_start_step_ = last_log_step_ = step;
}

double TrainProgress::lap_session(int64_t step) {
  const auto now = std::chrono::steady_clock::now();
  const double s = std::chrono::duration<double>(now - session_start_).count();
  session_start_ = now;
  session_start_step_ = step;
  return s;
}

void TrainProgress::watch_communication(const GradReducer* reducer, double unoverlapped_s) {
  reducer_ = reducer;
  comm_unoverlapped_s_ = unoverlapped_s;
}

// Training faster than the matmul peak means the peak was measured on a busy machine (now or when
// it was cached): measure again and keep the larger, in the cache too (the time it takes stays out
// of the next window's tokens/s).
void TrainProgress::remeasure_peak() {
  peak_remeasured_ = true;  // once: a model faster than its matmuls is reported as it is
  const auto dtype = bf16_ ? at::kBFloat16 : at::kFloat;
  const double again = measure_matmul_peak(device_, dtype);
  if (again > peak_flops_) {
    log::info("matmul peak measured again: {:.1f} GFLOP/s (at the start: {:.1f})", again / 1e9, peak_flops_ / 1e9);
    peak_flops_ = again;
    raise_cached_peak(device_, dtype, again);
  }
  last_log_time_ = std::chrono::steady_clock::now();
}

void TrainProgress::report(const StepReport& r, MetricsLog* metrics) {
  const auto now = std::chrono::steady_clock::now();
  const double window_s = std::chrono::duration<double>(now - last_log_time_).count();
  const double session_s = std::chrono::duration<double>(now - session_start_).count();
  const int64_t steps_done = r.step - session_start_step_;
  const double tok_s = (r.step - last_log_step_) * rates_.global_tokens_per_step / std::max(window_s, 1e-9);
  const double flops_s = tok_s / rates_.world * rates_.flops_per_token;
  const double eta = session_s / std::max<int64_t>(steps_done, 1) * (r.total_steps - r.step);
  const int64_t window_steps = std::max<int64_t>(r.step - last_log_step_, 1);
  const double comm_wait_s = reducer_ ? (reducer_->stats().wait_s - last_comm_wait_s_) / window_steps : 0.0;
  if (reducer_) last_comm_wait_s_ = reducer_->stats().wait_s;
  last_log_time_ = now;
  last_log_step_ = r.step;
  if (!metrics) return;
  const auto peak_mem = device_peak_memory(device_);  // before a probe could add to it
  if (flops_s > peak_flops_ && !peak_remeasured_) remeasure_peak();
  const double mfu = flops_s / peak_flops_;
  const double mfu_causal = mfu * rates_.causal_flops_per_token / rates_.flops_per_token;
  constexpr double gib = 1024.0 * 1024.0 * 1024.0;
  log::info("step {:>6}/{} | loss {:.4f} | lr {:.2e} | gnorm {:.3f} | {:.0f} tok/s | MFU {:.1f}%{} | ETA {}", r.step,
            r.total_steps, r.loss, r.lr, r.grad_norm, tok_s, 100 * mfu,
            peak_mem ? fmt::format(" | peak mem {:.1f} GiB", peak_mem->allocated_bytes / gib) : "",
            format_duration(eta));
  nlohmann::json record{{"kind", "train"},
                        {"step", r.step},
                        {"loss", r.loss},
                        {"lr", r.lr},
                        {"grad_norm", r.grad_norm},
                        {"tokens", r.tokens_seen},
                        {"tokens_per_s", tok_s},
                        {"mfu", mfu},
                        {"mfu_causal", mfu_causal},
                        {"comm_wait_s", comm_wait_s},  // per step: the all-reduce time backward did not hide
                        {"comm_allreduce_s", comm_unoverlapped_s_},  // the same all-reduce alone, measured at start
                        {"elapsed_s", r.elapsed_before_s + session_s}};
  if (peak_mem) {  // since the start of this session, on this rank's GPU
    record["device_peak_allocated_gib"] = peak_mem->allocated_bytes / gib;
    record["device_peak_reserved_gib"] = peak_mem->reserved_bytes / gib;
  }
  metrics->write(record);
}

}  // namespace ember
