// Data-parallel gradient averaging that overlaps backward. Parameters are grouped into buckets of
// about distributed.bucket_mb in reverse registration order (the order backward produces them); a
// hook after each gradient's accumulation copies it into its bucket, and a full bucket is
// all-reduced asynchronously while backward goes on. Buckets launch strictly in index order, so
// every rank issues the same collectives in the same order. Micro-steps of gradient accumulation
// before the last communicate nothing. finish() launches what is left (parameters backward never
// reached), waits, and writes the averaged gradients back; a parameter whose gradient no rank
// produced keeps none, as in one process.
#pragma once
#include <ATen/ATen.h>

#include <memory>
#include <vector>

#include "ember/distributed/communicator.h"

namespace ember {

struct ReducerStats {
  int64_t buckets = 0;
  int64_t launched_in_backward = 0;  // of the last synchronised step
  double wait_s = 0.0;               // total time finish() waited for communication
  int64_t bytes = 0;                 // per step and rank
};

class GradReducer {
 public:
  // params in registration order; bucket_bytes > 0; comm_bf16: communicate in bfloat16.
  GradReducer(std::vector<at::Tensor> params, Communicator& comm, int64_t bucket_bytes, bool comm_bf16);
  ~GradReducer();
  GradReducer(const GradReducer&) = delete;
  GradReducer& operator=(const GradReducer&) = delete;

  void begin_micro_step(bool sync);  // before each backward; sync on the step's last micro-step
  void finish();                     // after the last backward of the step
  const ReducerStats& stats() const { return stats_; }
  // Seconds one all-reduce of every bucket takes, in order and not overlapped with anything (the
  // mean of `rounds`): with stats().wait_s it gives the fraction of communication backward hid.
  // A collective: every rank calls it.
  double time_unoverlapped(int rounds);
  void on_grad_ready(size_t param);  // called by the hooks

 private:
  struct Bucket {
    std::vector<size_t> params;
    std::vector<int64_t> offsets;
    at::Tensor flat;            // gradients, then one "had a gradient" flag per parameter
    std::vector<float> flags;   // those flags on the host, copied into `flat` once at launch
    int64_t numel = 0;
    size_t ready = 0;
    bool launched = false;
    PendingOp op;
  };
  void launch_ready_buckets();
  void launch(Bucket& b);
  void fill(Bucket& b, size_t slot);
  void write_back(Bucket& b);

  std::vector<at::Tensor> params_;
  std::vector<size_t> bucket_of_, slot_of_;
  std::vector<bool> filled_;
  std::vector<Bucket> buckets_;
  Communicator& comm_;
  bool sync_ = false, in_backward_ = false;
  size_t next_launch_ = 0;
  ReducerStats stats_;
};

}  // namespace ember
