#include "ember/analysis/cosine_stats.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>

namespace ember {
namespace {

// Pairs of one row of a block, on a contiguous run of floats.
struct RowSums {
  double sum = 0.0, sum_sq = 0.0;
  float min = INFINITY, max = -INFINITY;
};

RowSums reduce_row(const float* v, int64_t n, double shift, int64_t* hist) {
  RowSums r;
  double s[4] = {0, 0, 0, 0}, q[4] = {0, 0, 0, 0};  // four chains hide the add latency
  auto one = [&](float c, int lane) {
    const double x = static_cast<double>(c) - shift;
    s[lane] += x;
    q[lane] += x * x;
    r.min = std::min(r.min, c);
    r.max = std::max(r.max, c);
    ++hist[CosineStats::bin_of(c)];
  };
  int64_t j = 0;
  for (; j + 4 <= n; j += 4)
    for (int lane = 0; lane < 4; ++lane) one(v[j + lane], lane);
  for (; j < n; ++j) one(v[j], 0);
  r.sum = (s[0] + s[1]) + (s[2] + s[3]);
  r.sum_sq = (q[0] + q[1]) + (q[2] + q[3]);
  return r;
}

// Fused CPU pass: per-row sums (added in row order, so the result does not depend on the thread
// count), per-thread histograms. On diagonal blocks rows p and R-1-p share one work item, which
// keeps the triangle's work even across threads.
void accumulate_cpu(const GramBlock& b, CosineStats& stats) {
  const auto g = b.values.contiguous().to(at::kFloat);
  const int64_t R = g.size(0), C = g.size(1);
  const float* data = g.const_data_ptr<float>();
  std::vector<RowSums> rows(R);
  const int64_t threads = at::get_num_threads();
  std::vector<std::vector<int64_t>> hist(threads, std::vector<int64_t>(CosineStats::kBins, 0));
  auto do_row = [&](int64_t r, int64_t* h) {
    const int64_t start = b.diagonal ? r + 1 : 0;
    rows[r] = start < C ? reduce_row(data + r * C + start, C - start, stats.shift, h) : RowSums{};
  };
  const int64_t items = b.diagonal ? (R + 1) / 2 : R;
  at::parallel_for(0, items, 16, [&](int64_t begin, int64_t end) {
    int64_t* h = hist[at::get_thread_num()].data();
    for (int64_t p = begin; p < end; ++p) {
      do_row(p, h);
      if (b.diagonal && R - 1 - p != p) do_row(R - 1 - p, h);
    }
  });
  for (int64_t r = 0; r < R; ++r) {
    const int64_t n = b.diagonal ? std::max<int64_t>(C - r - 1, 0) : C;
    if (n == 0) continue;
    const RowSums& s = rows[r];
    stats.sum += s.sum;
    stats.sum_sq += s.sum_sq;
    stats.min = stats.count ? std::min<double>(stats.min, s.min) : s.min;
    stats.max = stats.count ? std::max<double>(stats.max, s.max) : s.max;
    stats.count += n;
  }
  for (const auto& h : hist)
    for (int64_t i = 0; i < CosineStats::kBins; ++i) stats.histogram[i] += h[i];
}

}  // namespace

CosineStats::CosineStats(double s) : shift(s), histogram(kBins, 0) {}

double CosineStats::bin_center(int64_t bin) { return -1.0 + (bin + 0.5) * (2.0 / kBins); }

void CosineStats::merge(const CosineStats& o) {
  if (o.count == 0) return;
  min = count ? std::min(min, o.min) : o.min;
  max = count ? std::max(max, o.max) : o.max;
  count += o.count;
  sum += o.sum;
  sum_sq += o.sum_sq;
  for (int64_t i = 0; i < kBins; ++i) histogram[i] += o.histogram[i];
}

double CosineStats::mean() const { return count ? shift + sum / count : NAN; }

double CosineStats::stddev() const {
  if (count < 2) return 0.0;
  const double var = (sum_sq - sum * sum / count) / (count - 1);  // unbiased, about the shift
  return std::sqrt(std::max(var, 0.0));
}

void accumulate_gram_block(const GramBlock& block, CosineStats& stats) {
  if (block.values.device().is_cpu())
    accumulate_cpu(block, stats);
  else
    accumulate_gram_block_aten(block, stats);
}

void accumulate_gram_block_aten(const GramBlock& block, CosineStats& stats) {
  const auto& g = block.values;
  if (!block.diagonal) return accumulate_cosines(g.flatten(), stats);
  auto upper = at::ones({g.size(0), g.size(1)}, g.options().dtype(at::kBool)).triu(1);
  accumulate_cosines(g.masked_select(upper), stats);
}

void accumulate_cosines(const at::Tensor& cosines, CosineStats& stats) {
  if (cosines.numel() == 0) return;
  const auto c = cosines.to(at::kDouble);
  const auto x = c - stats.shift;
  const auto bins = ((c + 1.0) * static_cast<double>(CosineStats::kBins / 2)).floor().clamp(0, CosineStats::kBins - 1);
  const auto counts = at::bincount(bins.to(at::kLong), {}, CosineStats::kBins).to(at::kCPU);
  const int64_t* h = counts.const_data_ptr<int64_t>();
  for (int64_t i = 0; i < CosineStats::kBins; ++i) stats.histogram[i] += h[i];
  const double lo = c.min().item<double>(), hi = c.max().item<double>();
  stats.min = stats.count ? std::min(stats.min, lo) : lo;
  stats.max = stats.count ? std::max(stats.max, hi) : hi;
  stats.count += c.numel();
  stats.sum += x.sum().item<double>();
  stats.sum_sq += (x * x).sum().item<double>();
}

}  // namespace ember
