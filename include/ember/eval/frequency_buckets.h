// Frequency-stratified perplexity, as the Leviathan paper reports it (docs/leviathan.md): every
// evaluated token falls in the bucket of its relative frequency in the training data,
// count / training tokens, with edges 1e-7, 1e-6, 1e-5, 1e-4 by default (tokens never seen in
// training go to the rarest bucket). A bucket that no evaluated token reached is merged into its
// neighbour (the next more frequent one; the last into the one before), so at small scale the
// report shows only buckets that hold tokens; their tokens add up to the evaluation's.
#pragma once
#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

#include "ember/data/loader.h"
#include "ember/eval/perplexity.h"
#include "ember/model/lm.h"

namespace ember {

std::vector<double> default_bucket_edges();

struct FrequencyBucket {
  double lo = 0, hi = 1;  // relative frequency in training, [lo, hi)
  int64_t tokens = 0;
  double loss_sum = 0;
  double loss() const { return tokens ? loss_sum / static_cast<double>(tokens) : 0.0; }
};

// Throws a UsageError unless edges increase strictly inside (0, 1).
void check_bucket_edges(const std::vector<double>& edges);

class BucketTally {
 public:
  // counts: per-id training counts; edges: increasing relative frequencies in (0, 1).
  BucketTally(const std::vector<int64_t>& counts, std::vector<double> edges);
  void add(const at::Tensor& targets, const at::Tensor& losses);  // same shape, any device
  std::vector<FrequencyBucket> merged() const;

 private:
  std::vector<int64_t> bucket_of_id_;
  std::vector<FrequencyBucket> buckets_;
};

struct BucketedEval {
  EvalResult total;
  std::vector<FrequencyBucket> buckets;
};

BucketedEval evaluate_buckets(LanguageModel& model, BatchLoader& loader, int64_t batches, at::Device device, bool bf16,
                              const std::vector<int64_t>& train_counts, const std::vector<double>& edges);

}  // namespace ember
