#include "ember/data/batch_prefetcher.h"

namespace ember {

BatchPrefetcher::BatchPrefetcher(BatchLoader& loader, int64_t depth, bool pin)
    : loader_(loader), depth_(depth), pin_(pin && depth > 0), position_(loader.save_state()) {}

BatchPrefetcher::~BatchPrefetcher() { stop(); }

at::Tensor BatchPrefetcher::read_one(ComponentState& after) {
  auto batch = loader_.next();
  if (pin_) batch = batch.pin_memory();
  after = loader_.save_state();
  return batch;
}

at::Tensor BatchPrefetcher::next() {
  if (depth_ == 0) return read_one(position_);
  if (!reader_.joinable()) start();  // lazily: a resume restores the loader before the first read
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return !ready_.empty() || failure_; });
  if (ready_.empty()) std::rethrow_exception(failure_);  // batches read before a failure still count
  Ready front = std::move(ready_.front());
  ready_.pop_front();
  position_ = std::move(front.after);
  changed_.notify_all();
  return front.batch;
}

void BatchPrefetcher::run() {
  try {
    for (;;) {
      {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return stopping_ || static_cast<int64_t>(ready_.size()) < depth_; });
        if (stopping_) return;
      }
      Ready item;
      item.batch = read_one(item.after);  // outside the lock: the consumer takes ready batches meanwhile
      std::lock_guard lock(mutex_);
      ready_.push_back(std::move(item));
      changed_.notify_all();
    }
  } catch (...) {
    std::lock_guard lock(mutex_);
    failure_ = std::current_exception();
    changed_.notify_all();
  }
}

void BatchPrefetcher::start() {
  stopping_ = false;
  reader_ = std::thread([this] { run(); });
}

void BatchPrefetcher::stop() {
  if (!reader_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    changed_.notify_all();
  }
  reader_.join();
}

int64_t BatchPrefetcher::read_ahead() const {
  std::lock_guard lock(mutex_);
  return static_cast<int64_t>(ready_.size());
}

ComponentState BatchPrefetcher::save_state() const { return position_; }

// The batches read ahead belong to the old position: dropped, and reading starts again from the
// restored one.
void BatchPrefetcher::load_state(const ComponentState& state, const std::string& where) {
  stop();
  ready_.clear();
  failure_ = nullptr;
  try {
    loader_.load_state(state, where);
  } catch (...) {
    loader_.load_state(position_, where);  // back at the batch the consumer takes next
    throw;
  }
  position_ = loader_.save_state();
}

}  // namespace ember
