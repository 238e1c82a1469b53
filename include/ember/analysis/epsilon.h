// The epsilon estimator of docs/capacity.md: mu and sigma of the cosine similarity over every
// unordered pair i < j of the (non-zero) rows of an embedding matrix; epsilon = mu + 2 sigma.
//   exact    the default: the Gram matrix streamed block by block, float64 sums and a histogram
//   moments  the same exact mu and sigma from the d x d Gram identity in O(V d^2), without the
//            pairwise pass (so without histogram or extremes): seconds even for 128k x 4096
//   sampled  random pairs, with a confidence interval for epsilon; labelled as an estimate
#pragma once
#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "ember/config/enum_names.h"

namespace ember {

// Rows of a V x d matrix, checked, with zero rows dropped and the rest scaled to unit norm (fp32).
struct UnitRows {
  at::Tensor rows;
  int64_t input_rows = 0;
  int64_t dropped_zero_rows = 0;
};
// `where` names the matrix in errors (file and tensor). Throws DataError for a matrix that is not
// 2-D, not floating point, has NaN/Inf entries (naming the first such row) or < 2 non-zero rows.
UnitRows unit_rows(const at::Tensor& matrix, const std::string& where, at::Device device = at::kCPU);

enum class EpsilonMethod { exact, moments, sampled };
inline std::span<const EnumName<EpsilonMethod>> enum_names(EpsilonMethod) {
  static constexpr EnumName<EpsilonMethod> names[] = {
      {EpsilonMethod::exact, "exact"}, {EpsilonMethod::moments, "moments"}, {EpsilonMethod::sampled, "sampled"}};
  return names;
}
std::string method_label(EpsilonMethod m);  // "exact", "exact (Gram identity)", "sampled"

struct EpsilonEstimate {
  EpsilonMethod method = EpsilonMethod::exact;
  int64_t rows = 0, dim = 0, dropped_zero_rows = 0;
  int64_t pairs = 0;  // pairs measured (all V(V-1)/2, or the sample)
  double mu = 0.0, sigma = 0.0;
  double min_cosine = NAN, max_cosine = NAN;  // not known in moments mode
  double ci_low = NAN, ci_high = NAN;         // sampled: confidence interval of epsilon
  double confidence = NAN;                    // sampled: its level, e.g. 0.95
  std::vector<int64_t> histogram;             // CosineStats::kBins bins over [-1, 1]; may be empty
  double seconds = 0.0;

  double epsilon() const { return mu + 2.0 * sigma; }         // docs/capacity.md: eps = mu + 2 sigma
  double epsilon_3sigma() const { return mu + 3.0 * sigma; }  // the "exaggerated" variant
};

struct EpsilonOptions {
  EpsilonMethod method = EpsilonMethod::exact;
  int64_t block = 4096;            // exact: rows per Gram block (4096^2 fp32 = 64 MB)
  int64_t sample_pairs = 1000000;  // sampled: number of random pairs
  uint64_t seed = 0;               // sampled: the draw
  double confidence = 0.95;        // sampled: level of the interval
  std::string progress_label;      // non-empty: progress with ETA on stderr for long passes
};

EpsilonEstimate estimate_epsilon(const UnitRows& rows, const EpsilonOptions& options);

// Exact mean and unbiased standard deviation over all pairs i < j via
//   sum_{i<j} c_ij = (|sum_i x_i|^2 - sum_i |x_i|^2) / 2,
//   sum_{i<j} c_ij^2 = (|X^T X|_F^2 - sum_i |x_i|^4) / 2.
struct PairMoments {
  int64_t count = 0;
  double mean = 0.0, stddev = 0.0;
};
// Memory: one block of rows in float64 and the d x d Gram; without the stddev only the first
// identity is used, O(V d).
PairMoments pair_moments_identity(const at::Tensor& unit_rows, int64_t block = 4096, bool with_stddev = true);

}  // namespace ember
