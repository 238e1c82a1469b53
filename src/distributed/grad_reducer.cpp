#include "ember/distributed/grad_reducer.h"

#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>

#include <chrono>

#include "ember/util/error.h"

namespace ember {
namespace {

// Runs after AccumulateGrad has written the parameter's .grad for this backward.
struct ReadyHook final : torch::autograd::PostAccumulateGradHook {
  ReadyHook(GradReducer* r, size_t i) : reducer(r), index(i) {}
  void operator()(const torch::autograd::Variable&) override { reducer->on_grad_ready(index); }
  GradReducer* reducer;
  size_t index;
};

}  // namespace

GradReducer::GradReducer(std::vector<at::Tensor> params, Communicator& comm, int64_t bucket_bytes, bool comm_bf16)
    : params_(std::move(params)), comm_(comm) {
  if (bucket_bytes <= 0) throw ConfigError("distributed.bucket_mb must be > 0");
  bucket_of_.resize(params_.size());
  slot_of_.resize(params_.size());
  filled_.assign(params_.size(), false);
  for (size_t k = params_.size(); k-- > 0;) {  // reverse registration order
    const auto& p = params_[k];
    const bool split = buckets_.empty() || buckets_.back().numel * p.element_size() >= bucket_bytes ||
                       buckets_.back().flat.device() != p.device();
    if (split) {
      buckets_.emplace_back();
      buckets_.back().flat = at::empty({0}, p.options());  // device marker until allocated
    }
    auto& b = buckets_.back();
    bucket_of_[k] = buckets_.size() - 1;
    slot_of_[k] = b.params.size();
    b.params.push_back(k);
    b.offsets.push_back(b.numel);
    b.numel += p.numel();
  }
  const auto dtype = comm_bf16 ? at::kBFloat16 : at::kFloat;
  for (auto& b : buckets_) {
    b.flat = at::zeros({b.numel + static_cast<int64_t>(b.params.size())}, b.flat.options().dtype(dtype));
    b.flags.assign(b.params.size(), 0.0f);
    stats_.bytes += b.flat.numel() * b.flat.element_size();
  }
  stats_.buckets = static_cast<int64_t>(buckets_.size());
  for (size_t k = 0; k < params_.size(); ++k)
    torch::autograd::impl::set_post_acc_grad_hooks(params_[k], std::make_unique<ReadyHook>(this, k));
}

GradReducer::~GradReducer() {
  for (auto& p : params_) torch::autograd::impl::set_post_acc_grad_hooks(p, nullptr);
}

void GradReducer::begin_micro_step(bool sync) {
  sync_ = sync;
  in_backward_ = sync;
  if (!sync) return;
  for (auto& b : buckets_) b.ready = 0, b.launched = false;
  filled_.assign(params_.size(), false);
  next_launch_ = 0;
  stats_.launched_in_backward = 0;
}

void GradReducer::on_grad_ready(size_t param) {
  if (!in_backward_ || filled_[param]) return;
  auto& b = buckets_[bucket_of_[param]];
  fill(b, slot_of_[param]);
  filled_[param] = true;
  b.ready += 1;
  launch_ready_buckets();
}

void GradReducer::fill(Bucket& b, size_t slot) {
  at::NoGradGuard no_grad;
  const auto& p = params_[b.params[slot]];
  const auto& g = p.grad();
  auto dst = b.flat.narrow(0, b.offsets[slot], p.numel());
  const double world = comm_.world();
  if (g.defined())
    dst.copy_(g.reshape({-1})).div_(world);  // the sum of grad / world is the mean
  else
    dst.zero_();
  b.flags[slot] = g.defined() ? static_cast<float>(1.0 / world) : 0.0f;
}

void GradReducer::launch_ready_buckets() {
  while (next_launch_ < buckets_.size() && buckets_[next_launch_].ready == buckets_[next_launch_].params.size()) {
    launch(buckets_[next_launch_++]);
    if (in_backward_) stats_.launched_in_backward += 1;
  }
}

void GradReducer::launch(Bucket& b) {
  b.launched = true;
  b.flat.narrow(0, b.numel, static_cast<int64_t>(b.flags.size())).copy_(at::tensor(b.flags));
  b.op = comm_.all_reduce_sum_async(b.flat);
}

void GradReducer::finish() {
  if (!sync_) throw Error("GradReducer::finish without a synchronised micro-step");
  in_backward_ = false;
  for (size_t k = 0; k < params_.size(); ++k) {  // parameters backward did not reach on this rank
    if (filled_[k]) continue;
    auto& b = buckets_[bucket_of_[k]];
    fill(b, slot_of_[k]);
    filled_[k] = true;
    b.ready += 1;
  }
  launch_ready_buckets();
  const auto t0 = std::chrono::steady_clock::now();
  for (auto& b : buckets_) b.op.wait();
  stats_.wait_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (auto& b : buckets_) write_back(b);
  sync_ = false;
}

double GradReducer::time_unoverlapped(int rounds) {
  std::vector<at::Tensor> copies;
  for (const auto& b : buckets_) copies.push_back(b.flat.clone());
  comm_.barrier();
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < rounds; ++r) {
    std::vector<PendingOp> ops;
    for (auto& c : copies) ops.push_back(comm_.all_reduce_sum_async(c));
    for (auto& op : ops) op.wait();
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / std::max(rounds, 1);
}

void GradReducer::write_back(Bucket& b) {
  at::NoGradGuard no_grad;
  const auto flags =
      b.flat.narrow(0, b.numel, static_cast<int64_t>(b.params.size())).to(at::kCPU, at::kFloat).contiguous();
  const float* had_grad = flags.data_ptr<float>();
  for (size_t slot = 0; slot < b.params.size(); ++slot) {
    auto& p = params_[b.params[slot]];
    if (had_grad[slot] == 0.0f) continue;  // no rank had a gradient
    auto mean = b.flat.narrow(0, b.offsets[slot], p.numel()).view(p.sizes());
    if (p.grad().defined())
      p.mutable_grad().copy_(mean);
    else
      p.mutable_grad() = mean.to(p.dtype()).clone();
  }
}

}  // namespace ember
