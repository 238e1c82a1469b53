#include "ember/eval/frequency_buckets.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

#include "ember/model/autocast.h"
#include "ember/util/error.h"

namespace ember {

std::vector<double> default_bucket_edges() { return {1e-7, 1e-6, 1e-5, 1e-4}; }

void check_bucket_edges(const std::vector<double>& edges) {
  const bool increasing = std::adjacent_find(edges.begin(), edges.end(), std::greater_equal<>()) == edges.end();
  if (!increasing || (!edges.empty() && (edges.front() <= 0 || edges.back() >= 1)))
    throw UsageError("--bucket-edges: expected increasing relative frequencies in (0, 1)");
}

BucketTally::BucketTally(const std::vector<int64_t>& counts, std::vector<double> edges) {
  check_bucket_edges(edges);
  double lo = 0;
  for (double e : edges) buckets_.push_back({lo, e}), lo = e;
  buckets_.push_back({lo, 1.0});
  const double total = static_cast<double>(std::accumulate(counts.begin(), counts.end(), int64_t{0}));
  bucket_of_id_.resize(counts.size());
  for (size_t id = 0; id < counts.size(); ++id) {  // relative frequency f = count / training tokens
    const double f = total > 0 ? static_cast<double>(counts[id]) / total : 0.0;
    bucket_of_id_[id] = std::upper_bound(edges.begin(), edges.end(), f) - edges.begin();
  }
}

void BucketTally::add(const at::Tensor& targets, const at::Tensor& losses) {
  const auto ids = targets.reshape({-1}).to(at::kCPU, at::kLong).contiguous();
  const auto ce = losses.reshape({-1}).to(at::kCPU, at::kDouble).contiguous();
  const int64_t* id = ids.data_ptr<int64_t>();
  const double* l = ce.data_ptr<double>();
  for (int64_t i = 0; i < ids.numel(); ++i) {
    auto& b = buckets_[static_cast<size_t>(bucket_of_id_.at(static_cast<size_t>(id[i])))];
    b.tokens += 1;
    b.loss_sum += l[i];
  }
}

std::vector<FrequencyBucket> BucketTally::merged() const {
  std::vector<FrequencyBucket> out;
  FrequencyBucket pending{-1, 0};  // empty buckets waiting for the next one that holds tokens
  for (const auto& b : buckets_) {
    if (pending.lo < 0) pending.lo = b.lo;
    pending.hi = b.hi;
    pending.tokens += b.tokens;
    pending.loss_sum += b.loss_sum;
    if (pending.tokens > 0) out.push_back(pending), pending = {-1, 0};
  }
  if (pending.lo >= 0 && !out.empty()) out.back().hi = pending.hi;  // trailing empty buckets
  return out;
}

BucketedEval evaluate_buckets(LanguageModel& model, BatchLoader& loader, int64_t batches, at::Device device, bool bf16,
                              const std::vector<int64_t>& train_counts, const std::vector<double>& edges) {
  BucketTally tally(train_counts, edges);
  BucketedEval out;
  double total = 0;
  AutocastScope autocast(device, bf16);
  for_each_eval_batch(loader, batches, device, [&](const at::Tensor& x, const at::Tensor& y) {
    const auto losses = model.token_losses(x, y);
    tally.add(y, losses);
    total += losses.sum().item<double>();
    out.total.tokens += y.numel();
  });
  out.total.loss = total / static_cast<double>(out.total.tokens);
  out.total.perplexity = std::exp(out.total.loss);
  out.buckets = tally.merged();
  return out;
}

}  // namespace ember
