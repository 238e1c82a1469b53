#include "ember/model/taper.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <algorithm>
#include <cmath>
#include <numeric>

#include "ember/util/error.h"

namespace ember {
namespace {

const char* kKey = "model.mlp.taper";

int64_t round_to(double x, int64_t q) { return q * static_cast<int64_t>(std::llround(x / q)); }

double logistic(double x) { return 1.0 / (1.0 + std::exp(-x)); }

void check_positive(const std::vector<int64_t>& w, const TaperConfig& cfg) {
  for (size_t l = 0; l < w.size(); ++l)
    if (w[l] <= 0)
      throw ConfigError(
          fmt::format("{}: schedule {} with start = {}, end = {} makes layer {} width {} "
                      "(<= 0); raise end or multiple_of granularity",
                      kKey, enum_name(cfg.schedule), cfg.start, cfg.end, l, w[l]));
}

std::vector<int64_t> group_widths(const TaperConfig& cfg, int64_t L, int64_t d_base) {
  const auto n = static_cast<int64_t>(cfg.groups.size());
  if (n == 0 || L % n != 0)
    throw ConfigError(fmt::format("{}.groups: {} groups do not divide n_layers = {}", kKey, n, L));
  const double mean = std::accumulate(cfg.groups.begin(), cfg.groups.end(), 0.0) / n;
  if (std::abs(mean - 1.0) > 1e-9)
    throw ConfigError(fmt::format("{}.groups: factors [{}] average {}, not 1 (the budget would change)", kKey,
                                  fmt::join(cfg.groups, ", "), mean));
  std::vector<int64_t> w;
  for (int64_t l = 0; l < L; ++l) w.push_back(round_to(cfg.groups[l / (L / n)] * d_base, cfg.multiple_of));
  const int64_t total = std::accumulate(w.begin(), w.end(), int64_t{0});
  if (total != L * d_base)
    throw ConfigError(
        fmt::format("{}.groups: factors [{}] times d_ff = {} rounded to multiple_of = {} "
                    "give total width {} instead of {}",
                    kKey, fmt::join(cfg.groups, ", "), d_base, cfg.multiple_of, total, L * d_base));
  return w;
}

}  // namespace

void TaperConfig::fields(FieldVisitor& v) {
  v.choice("schedule", schedule);
  v.field("start", start, Bound::positive());
  v.field("end", end, Bound::positive());
  v.field("steepness", steepness, Bound::positive());
  v.field("multiple_of", multiple_of, Bound::positive());
  v.field("groups", groups, Bound::positive());
}

double taper_profile(const TaperConfig& cfg, double t) {
  switch (cfg.schedule) {
    case TaperSchedule::linear: return 1.0 - t;                           // f(t) = 1 - t
    case TaperSchedule::cosine: return (1.0 + std::cos(M_PI * t)) / 2.0;  // f(t) = (1 + cos(pi t)) / 2
    case TaperSchedule::sigmoid: {  // f(t) = (s(-k(t-1/2)) - s(-k/2)) / (s(k/2) - s(-k/2))
      const double k = cfg.steepness;
      return (logistic(-k * (t - 0.5)) - logistic(-k / 2)) / (logistic(k / 2) - logistic(-k / 2));
    }
    default: return 0.5;  // uniform: d_end + (d_start - d_end) / 2 = d_base when start + end = 2
  }
}

std::vector<int64_t> taper_widths(const TaperConfig& cfg, int64_t L, int64_t d_base) {
  if (cfg.schedule == TaperSchedule::uniform) return std::vector<int64_t>(static_cast<size_t>(L), d_base);
  const int64_t q = cfg.multiple_of;
  if (d_base % q != 0)
    throw ConfigError(fmt::format("{}.multiple_of: model.mlp.d_ff = {} is not a multiple of {}", kKey, d_base, q));
  if (cfg.schedule == TaperSchedule::groups) {
    auto w = group_widths(cfg, L, d_base);
    check_positive(w, cfg);
    return w;
  }
  if (std::abs(cfg.start + cfg.end - 2.0) > 1e-9)
    throw ConfigError(
        fmt::format("{}: start = {} and end = {} must sum to 2 for the {} schedule to keep "
                    "the uniform budget",
                    kKey, cfg.start, cfg.end, enum_name(cfg.schedule)));
  const double d_start = cfg.start * d_base, d_end = cfg.end * d_base;
  std::vector<int64_t> w(static_cast<size_t>(L), d_base);  // an odd middle layer keeps d_base
  for (int64_t l = 0; l < L / 2; ++l) {
    const double t = static_cast<double>(l) / static_cast<double>(L - 1);
    // The first width is pinned to round(start d_base), the interior rounded to a multiple of q
    // but never above the layer before (a pinned end off the grid could round its neighbour up).
    w[l] = l == 0 ? std::llround(d_start)
                  : std::min(round_to(d_end + (d_start - d_end) * taper_profile(cfg, t), q), w[l - 1]);
    w[L - 1 - l] = 2 * d_base - w[l];  // pairing keeps the budget exact: the last is round(end d_base)
  }
  check_positive(w, cfg);
  return w;
}

}  // namespace ember
