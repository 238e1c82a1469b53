#include "ember/analysis/epsilon.h"

#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cmath>

#include "ember/analysis/cosine_stats.h"
#include "ember/analysis/gram_blocks.h"
#include "ember/util/error.h"
#include "ember/util/progress.h"

namespace ember {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void check_finite(const at::Tensor& m, const std::string& where) {
  // A float64 sum of fp32 values cannot overflow, so it is finite exactly when every entry is.
  if (std::isfinite(m.sum(at::kDouble).item<double>())) return;
  const auto bad_rows = (~at::isfinite(m)).any(1).nonzero();
  if (bad_rows.numel() == 0) return;
  throw DataError(
      fmt::format("{}: {} row(s) contain NaN or Inf values (first: row {}); expected a "
                  "finite embedding matrix",
                  where, bad_rows.size(0), bad_rows[0][0].item<int64_t>()));
}

void fill_from_stats(const CosineStats& s, EpsilonEstimate& e) {
  e.pairs = s.count;
  e.mu = s.mean();
  e.sigma = s.stddev();
  e.min_cosine = s.min;
  e.max_cosine = s.max;
  e.histogram = s.histogram;
}

EpsilonEstimate exact_pass(const at::Tensor& rows, const EpsilonOptions& o) {
  EpsilonEstimate e;
  // The exact mean (the first Gram identity, O(V d)) is the shift that keeps the float64 variance
  // well conditioned.
  CosineStats stats(pair_moments_identity(rows, o.block, false).mean);
  const int64_t V = rows.size(0), total = pairs_of(V);
  ProgressMeter progress(o.progress_label, static_cast<double>(total));
  for_each_gram_block(rows, o.block, [&](const GramBlock& b) {
    accumulate_gram_block(b, stats);
    if (!o.progress_label.empty())
      progress.update(static_cast<double>(stats.count),
                      fmt::format("{:.3g} of {:.3g} pairs", double(stats.count), double(total)));
  });
  fill_from_stats(stats, e);
  return e;
}

EpsilonEstimate moments_pass(const at::Tensor& rows, const EpsilonOptions& o) {
  EpsilonEstimate e;
  const PairMoments m = pair_moments_identity(rows, o.block);
  e.pairs = m.count;
  e.mu = m.mean;
  e.sigma = m.stddev;
  return e;
}

// Delta-method interval of eps = m + 2 s from the sample's central moments:
//   Var(m) = s2/N, Var(s) ~ (m4 - s2^2) / (4 s2 N), Cov(m, s) ~ m3 / (2 s N).
void confidence_interval(const at::Tensor& cosines, double z, EpsilonEstimate& e) {
  const auto x = cosines.to(at::kDouble) - e.mu;
  const double n = static_cast<double>(cosines.numel());
  const double s2 = e.sigma * e.sigma;
  const double m3 = x.pow(3).mean().item<double>(), m4 = x.pow(4).mean().item<double>();
  double var = s2 / n;
  if (s2 > 0) var += ((m4 - s2 * s2) / s2 + 2.0 * m3 / e.sigma) / n;
  const double half = z * std::sqrt(std::max(var, 0.0));
  e.ci_low = e.epsilon() - half;
  e.ci_high = e.epsilon() + half;
}

double normal_quantile_two_sided(double confidence) {
  if (!(confidence > 0 && confidence < 1))
    throw UsageError(fmt::format("confidence must be in (0, 1), got {}", confidence));
  // Bisection on erf: z with P(|Z| <= z) = confidence.
  double lo = 0.0, hi = 10.0;
  for (int i = 0; i < 100; ++i) {
    const double mid = 0.5 * (lo + hi);
    (std::erf(mid / std::sqrt(2.0)) < confidence ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

EpsilonEstimate sampled_pass(const at::Tensor& rows, const EpsilonOptions& o) {
  if (o.sample_pairs < 2) throw UsageError(fmt::format("--sample: need at least 2 pairs, got {}", o.sample_pairs));
  const int64_t V = rows.size(0), N = o.sample_pairs;
  auto gen = at::make_generator<at::CPUGeneratorImpl>(o.seed);
  // Uniform over unordered pairs: i uniform, j uniform over the other V - 1 rows.
  auto i = at::randint(0, V, {N}, gen, at::TensorOptions().dtype(at::kLong));
  auto j = at::randint(0, V - 1, {N}, gen, at::TensorOptions().dtype(at::kLong));
  j = j + (j >= i).to(at::kLong);
  const auto dev = rows.device();
  std::vector<at::Tensor> parts;
  // Pairs per chunk: 128 MB of gathered rows per side (random gathers are memory bound; fewer,
  // larger chunks measured fastest).
  const int64_t chunk = std::max<int64_t>(1, (int64_t{1} << 25) / rows.size(1));
  for (int64_t s = 0; s < N; s += chunk) {
    const int64_t n = std::min<int64_t>(chunk, N - s);
    const auto a = rows.index_select(0, i.narrow(0, s, n).to(dev));
    const auto b = rows.index_select(0, j.narrow(0, s, n).to(dev));
    parts.push_back((a * b).sum(1));  // row-wise dot products
  }
  const auto cosines = at::cat(parts);
  CosineStats stats(cosines.to(at::kDouble).mean().item<double>());
  accumulate_cosines(cosines, stats);
  EpsilonEstimate e;
  fill_from_stats(stats, e);
  e.confidence = o.confidence;
  confidence_interval(cosines, normal_quantile_two_sided(o.confidence), e);
  return e;
}

}  // namespace

UnitRows unit_rows(const at::Tensor& matrix, const std::string& where, at::Device device) {
  if (matrix.dim() != 2)
    throw DataError(fmt::format("{}: expected a 2-D V x d embedding matrix, got {} dimension(s) {}", where,
                                matrix.dim(), fmt::join(matrix.sizes(), " x ")));
  if (!at::isFloatingType(matrix.scalar_type()))
    throw DataError(fmt::format("{}: expected a floating-point matrix (fp32, fp16, bf16, fp64), got {}", where,
                                c10::toString(matrix.scalar_type())));
  // fp64 stays fp64 until its rows are scaled: 1e39 or 1e-46 are finite and non-zero there.
  auto m = matrix.to(device, matrix.scalar_type() == at::kDouble ? at::kDouble : at::kFloat);
  bool owned = !m.is_same(matrix);  // a converted copy may be normalised in place
  check_finite(m, where);
  UnitRows out;
  out.input_rows = m.size(0);
  // Each row divided by its largest |x| first, so that its norm neither overflows nor underflows.
  auto peak = m.abs().amax({1}, true);
  peak.masked_fill_(peak == 0, 1.0);
  m = (owned ? m.div_(peak) : m / peak).to(at::kFloat);
  owned = true;
  auto norms = at::linalg_vector_norm(m, 2, {1}, true);
  const auto keep = (norms.squeeze(1) > 0).nonzero().squeeze(1);
  out.dropped_zero_rows = out.input_rows - keep.size(0);
  if (keep.size(0) < 2)
    throw DataError(
        fmt::format("{}: needs at least 2 non-zero rows, has {} (of {})", where, keep.size(0), out.input_rows));
  if (out.dropped_zero_rows) {
    m = m.index_select(0, keep);
    norms = norms.index_select(0, keep);
    owned = true;
  }
  out.rows = (owned ? m.div_(norms) : m / norms).contiguous();
  return out;
}

std::string method_label(EpsilonMethod m) {
  switch (m) {
    case EpsilonMethod::exact: return "exact";
    case EpsilonMethod::moments: return "exact (Gram identity)";
    case EpsilonMethod::sampled: break;
  }
  return "sampled";
}

PairMoments pair_moments_identity(const at::Tensor& rows, int64_t block, bool with_stddev) {
  if (block < 1) throw UsageError("Gram identity: block size must be positive, got " + std::to_string(block));
  const int64_t V = rows.size(0), d = rows.size(1);
  auto total = at::zeros({d}, rows.options().dtype(at::kDouble));               // sum_i x_i
  auto gram = with_stddev ? at::zeros({d, d}, total.options()) : at::Tensor();  // X^T X
  double norms2 = 0.0, norms4 = 0.0;                                            // sum_i |x_i|^2 and sum_i |x_i|^4
  for (int64_t s = 0; s < V; s += block) {  // float64 copies of one block of rows at a time
    const auto x = rows.narrow(0, s, std::min(block, V - s)).to(at::kDouble);
    const auto sq = x.pow(2).sum(1);
    total += x.sum(0);
    norms2 += sq.sum().item<double>();
    norms4 += sq.pow(2).sum().item<double>();
    if (with_stddev) gram.addmm_(x.t(), x);
  }
  PairMoments m;
  m.count = pairs_of(V);
  const double n = static_cast<double>(m.count);
  // sum_{i<j} c_ij = (|sum_i x_i|^2 - sum_i |x_i|^2) / 2
  m.mean = 0.5 * (total.dot(total).item<double>() - norms2) / n;
  if (!with_stddev || m.count < 2) return m;
  // sum_{i<j} c_ij^2 = (|X^T X|_F^2 - sum_i |x_i|^4) / 2
  const double s2 = 0.5 * (gram.pow(2).sum().item<double>() - norms4);
  m.stddev = std::sqrt(std::max((s2 - n * m.mean * m.mean) / (n - 1), 0.0));  // unbiased
  return m;
}

EpsilonEstimate estimate_epsilon(const UnitRows& u, const EpsilonOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  EpsilonEstimate e;
  switch (o.method) {
    case EpsilonMethod::exact: e = exact_pass(u.rows, o); break;
    case EpsilonMethod::moments: e = moments_pass(u.rows, o); break;
    case EpsilonMethod::sampled: e = sampled_pass(u.rows, o); break;
  }
  e.method = o.method;
  e.rows = u.rows.size(0);
  e.dim = u.rows.size(1);
  e.dropped_zero_rows = u.dropped_zero_rows;
  e.seconds = seconds_since(t0);
  return e;
}

}  // namespace ember
