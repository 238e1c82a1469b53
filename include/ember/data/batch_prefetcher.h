// Reads a loader's next batches ahead on a background thread, so that the training step does not
// wait on the shards, and into pinned host memory when the batches go to a GPU (the copy can then
// run asynchronously, non_blocking). Its checkpoint state is the consumer's: the loader state after
// the last batch handed out, not after the last one read ahead, so a resumed run takes exactly the
// batch it would have taken next. `depth` batches are read ahead (kernels.prefetch_batches, default 2);
// 0 reads each batch when it is asked for, on the caller's thread.
#pragma once
#include <ATen/ATen.h>

#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include "ember/data/loader.h"

namespace ember {

class BatchPrefetcher final : public Stateful {
 public:
  // `loader` must outlive this. `pin`: each batch read ahead is copied into pinned memory (for a CUDA
  // device); with depth 0 batches stay in pageable memory, as the loader gives them.
  BatchPrefetcher(BatchLoader& loader, int64_t depth, bool pin);
  ~BatchPrefetcher() override;
  BatchPrefetcher(const BatchPrefetcher&) = delete;
  BatchPrefetcher& operator=(const BatchPrefetcher&) = delete;

  at::Tensor next();  // as BatchLoader::next; rethrows what the reading thread threw
  int64_t depth() const { return depth_; }
  int64_t read_ahead() const;  // batches read and not yet handed out
  ComponentState save_state() const override;
  void load_state(const ComponentState& state, const std::string& where) override;

 private:
  struct Ready {
    at::Tensor batch;
    ComponentState after;  // the loader's state once this batch was read
  };
  at::Tensor read_one(ComponentState& after);
  void start();
  void stop();
  void run();

  BatchLoader& loader_;
  const int64_t depth_;
  const bool pin_;
  ComponentState position_;  // what a checkpoint saves: after the last batch handed out
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Ready> ready_;
  std::exception_ptr failure_;
  bool stopping_ = false;
  std::thread reader_;
};

}  // namespace ember
