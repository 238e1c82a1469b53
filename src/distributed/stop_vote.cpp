#include "ember/distributed/stop_vote.h"

#include <c10/core/impl/VirtualGuardImpl.h>

namespace ember {

bool StopVote::cast(bool ask) {
  if (!comm_) return ask;
  const auto device = comm_->device();
  Ballot b;
  b.sum = at::full({1}, ask ? 1.0f : 0.0f, at::TensorOptions(at::kFloat).device(device));
  b.op = comm_->all_reduce_sum_async(b.sum);
  if (!device.is_cpu()) {
    b.op.wait();  // orders this stream after the collective (NCCL: the host does not block)
    b.host = at::empty({1}, at::TensorOptions(at::kFloat).pinned_memory(true));
    b.host.copy_(b.sum, /*non_blocking=*/true);
    const c10::impl::VirtualGuardImpl guard(device.type());
    b.copied.emplace(device.type());
    b.copied->record(guard.getStream(device));
  }
  pending_.push_back(std::move(b));
  if (static_cast<int64_t>(pending_.size()) <= lag_) return false;
  auto oldest = std::move(pending_.front());
  pending_.pop_front();
  return read(oldest);
}

bool StopVote::drain() {
  bool any = false;
  while (!pending_.empty()) {
    any = read(pending_.front()) || any;
    pending_.pop_front();
  }
  return any;
}

bool StopVote::read(Ballot& b) {
  if (b.copied) {
    b.copied->synchronize();  // long done: only this vote's copy is waited for, not the steps after it
    return b.host.data_ptr<float>()[0] > 0.0f;
  }
  b.op.wait();  // CPU (Gloo): the peers reached this vote `lag` steps ago
  return b.sum.data_ptr<float>()[0] > 0.0f;
}

}  // namespace ember
