// Running statistics of pairwise cosine similarities (docs/capacity.md, "The epsilon
// estimator"): count, sum and sum of squares in float64, extremes, and a histogram over [-1, 1].
// Sums are taken about a shift (the exact mean when known) so that the variance does not suffer
// from cancellation when mu is large next to sigma.
#pragma once
#include <ATen/ATen.h>

#include <vector>

#include "ember/analysis/gram_blocks.h"

namespace ember {

struct CosineStats {
  static constexpr int64_t kBins = 2000;  // bins of width 0.001 over [-1, 1]

  explicit CosineStats(double shift = 0.0);
  double shift;
  int64_t count = 0;
  double sum = 0.0;             // of (cos - shift)
  double sum_sq = 0.0;          // of (cos - shift)^2
  double min = 0.0, max = 0.0;  // valid when count > 0
  std::vector<int64_t> histogram;

  void merge(const CosineStats& other);  // other must have the same shift
  double mean() const;
  double stddev() const;  // unbiased (n - 1), as the reference
  static int64_t bin_of(double cosine) {
    // Truncation equals floor here: every value below 0 lands in bin 0 after the clamp anyway
    // (and std::floor is a libm call on baseline x86-64, too slow for a billion pairs).
    const auto bin = static_cast<int64_t>((cosine + 1.0) * (kBins / 2));
    return bin < 0 ? 0 : bin >= kBins ? kBins - 1 : bin;
  }
  static double bin_center(int64_t bin);
};

// Adds the pairs of a Gram block: all of it, or its strict upper triangle on diagonal blocks.
// CPU blocks go through a fused multi-threaded loop; other devices through ATen ops.
void accumulate_gram_block(const GramBlock& block, CosineStats& stats);
// The ATen-only path (any device); public so that tests can hold it against the CPU loop.
void accumulate_gram_block_aten(const GramBlock& block, CosineStats& stats);
// Adds a 1-D tensor of cosines (e.g. sampled pairs).
void accumulate_cosines(const at::Tensor& cosines, CosineStats& stats);

}  // namespace ember
