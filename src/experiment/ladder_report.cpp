#include "ember/experiment/ladder_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "ember/experiment/run_report.h"
#include "ember/util/error.h"
#include "ember/util/files.h"

namespace ember {
namespace {

namespace fs = std::filesystem;

std::vector<const ScalingObservation*> points_of(const LadderData& d, size_t member) {
  std::vector<const ScalingObservation*> out;
  for (const auto& p : d.points)
    if (p.member == member) out.push_back(&p);
  return out;
}

// The least-squares slope of the per-size mean loss against log N: losses should fall with size.
double loss_slope(const std::vector<const ScalingObservation*>& pts) {
  std::map<double, std::pair<double, int>> by_n;
  for (const auto* p : pts) by_n[p->n].first += p->loss, by_n[p->n].second += 1;
  double sx = 0, sy = 0, sxx = 0, sxy = 0, k = 0;
  for (const auto& [n, v] : by_n) {
    const double x = std::log(n), y = v.first / v.second;
    sx += x, sy += y, sxx += x * x, sxy += x * y, k += 1;
  }
  return (k * sxy - sx * sy) / (k * sxx - sx * sx);
}

// Whether the member can be fitted; warnings for a missing size and for what stops a fit.
bool check_member(const LadderData& d, size_t m, LadderFit& fit, std::vector<std::string>& warnings) {
  const auto pts = points_of(d, m);
  std::set<size_t> sizes;
  for (const auto* p : pts) sizes.insert(p->size);
  fit.sizes = sizes.size(), fit.runs = pts.size();
  std::vector<std::string> lacking;
  for (size_t s = 0; s < d.sizes.size(); ++s)
    if (!sizes.count(s)) lacking.push_back(d.sizes[s]);
  if (!lacking.empty())
    warnings.push_back(fmt::format("member '{}' has no finished run at size(s) {}{}", d.members[m],
                                   fmt::join(lacking, ", "), sizes.size() >= 3 ? ": its fit uses the others" : ""));
  if (sizes.size() < 3) {
    fit.why_not = fmt::format("finished runs at {} size(s); a fit needs 3", sizes.size());
  } else if (loss_slope(pts) >= 0) {
    fit.why_not = "its losses do not fall with size";
  } else {
    return true;
  }
  warnings.push_back(fmt::format("member '{}' is not fitted: {}", d.members[m], fit.why_not));
  return false;
}

// The fit's curve and 95% band on 40 points over the ladder's span of N (log-spaced).
void fill_band(LadderFit& fit, const std::vector<PowerLaw>& replicates, double lo, double hi) {
  for (int i = 0; i < 40; ++i) {
    const double n = lo * std::pow(hi / lo, i / 39.0);
    std::vector<double> at;
    for (const auto& l : replicates) at.push_back(l(n));
    const auto band = percentile_interval(at);
    fit.grid_n.push_back(n), fit.grid_loss.push_back(fit.law(n));
    fit.band_low.push_back(band.low), fit.band_high.push_back(band.high);
  }
}

// The measured paired difference member - baseline at one size, over the seeds both finished.
PairedDiff observed_gap(const LadderData& d, size_t member, size_t size) {
  std::map<int64_t, double> base, mine;
  for (const auto& p : d.points)
    if (p.size == size && p.member == d.baseline) base[p.seed] = p.loss;
    else if (p.size == size && p.member == member) mine[p.seed] = p.loss;
  std::vector<int64_t> seeds;
  std::vector<double> diffs;
  for (const auto& [seed, loss] : mine)
    if (base.count(seed)) seeds.push_back(seed), diffs.push_back(loss - base[seed]);
  return seeds.empty() ? PairedDiff{} : paired_difference(seeds, diffs);
}

LadderGap gap_at(const LadderReport& r, const std::vector<std::vector<PowerLaw>>& reps, size_t m, std::string size,
                 double n, double lo, double hi) {
  const auto& mine = r.fits[m].law;
  const auto& base = r.fits[r.data.baseline].law;
  LadderGap g;
  g.member = r.data.members[m], g.size = std::move(size), g.n = n, g.gap = mine(n) - base(n);
  g.extrapolated = n < lo * (1 - 1e-9) || n > hi * (1 + 1e-9);
  std::vector<double> gaps;  // the same draw of cells for both members: the gap stays paired
  for (size_t b = 0; b < reps[m].size(); ++b) gaps.push_back(reps[m][b](n) - reps[r.data.baseline][b](n));
  g.interval = percentile_interval(gaps);
  g.resolved = g.interval.low > 0 || g.interval.high < 0;
  return g;
}

}  // namespace

namespace {

// The ladder's members, sizes, baseline, N per size and target, without points.
LadderData ladder_frame(const LadderSpec& spec, const LadderPlan& plan) {
  LadderData d;
  for (const auto& m : spec.members) d.members.push_back(m.name);
  for (const auto& s : spec.sizes) d.sizes.push_back(s.name);
  d.baseline = plan.baseline;
  d.size_n.assign(spec.sizes.size(), 0);
  for (const auto& e : plan.entries)
    if (e.member == plan.baseline) d.size_n[e.size] = e.n;
  d.target_n = plan.target_n, d.target = plan.target;
  d.count = spec.count == ParamCount::total ? "total" : "non-embedding";
  return d;
}

using RunKey = std::tuple<std::string, std::string, int64_t>;  // member, size, seed

// ladder_points.csv's losses by run, each row checked against the plan: a row of no planned run,
// or whose N is not the plan's, is a UsageError naming the file and line.
std::map<RunKey, double> points_by_run(const LadderSpec& spec, const LadderPlan& plan, const fs::path& file) {
  std::map<RunKey, double> planned_n;
  for (size_t i = 0; i < plan.runs.size(); ++i) {
    const auto& e = plan.entries[plan.run_entry[i]];
    planned_n[{spec.members[e.member].name, spec.sizes[e.size].name, plan.run_seed[i]}] = e.n;
  }
  std::istringstream in(read_text_file(file));
  std::string line;
  if (!std::getline(in, line) || line != "member,size,seed,n,loss")
    throw UsageError("ladder report: " + file.string() + ":1: expected the header member,size,seed,n,loss");
  std::map<RunKey, double> losses;
  for (int number = 2; std::getline(in, line); ++number) {
    const auto fail = [&](const std::string& what) {
      throw UsageError(fmt::format("ladder report: {}:{}: {}", file.string(), number, what));
    };
    std::vector<std::string> cells;
    std::istringstream row(line);
    for (std::string cell; std::getline(row, cell, ',');) cells.push_back(cell);
    if (cells.size() != 5) fail("expected 5 cells (member,size,seed,n,loss), got '" + line + "'");
    int64_t seed = 0;
    double n = 0, loss = 0;
    try {
      seed = std::stoll(cells[2]), n = std::stod(cells[3]), loss = std::stod(cells[4]);
    } catch (const std::logic_error&) {
      fail("expected numbers for seed, n and loss, got '" + line + "'");
    }
    const RunKey key{cells[0], cells[1], seed};
    const auto planned = planned_n.find(key);
    if (planned == planned_n.end())
      fail(fmt::format("no run of the ladder is member '{}' at size '{}', seed {}", cells[0], cells[1], seed));
    if (std::abs(n - planned->second) > 1e-9 * planned->second)
      fail(
          fmt::format("n {} is not the plan's {} (has the ladder or its configs changed?)", cells[3], planned->second));
    losses[key] = loss;
  }
  return losses;
}

}  // namespace

LadderData read_ladder_points(const LadderSpec& spec, const LadderPlan& plan, const fs::path& file,
                              std::vector<std::string>& missing) {
  if (!fs::is_regular_file(file)) throw UsageError("ladder report: points file '" + file.string() + "' not found");
  const auto losses = points_by_run(spec, plan, file);
  LadderData d = ladder_frame(spec, plan);
  for (size_t i = 0; i < plan.runs.size(); ++i) {  // in the plan's order, as read_ladder
    const auto& e = plan.entries[plan.run_entry[i]];
    const auto loss = losses.find({spec.members[e.member].name, spec.sizes[e.size].name, plan.run_seed[i]});
    if (loss == losses.end()) {
      missing.push_back(plan.runs[i].name);
      continue;
    }
    d.points.push_back({e.member, e.size, plan.run_seed[i], e.n, loss->second});
  }
  return d;
}

LadderData read_ladder(const LadderSpec& spec, const LadderPlan& plan, std::vector<std::string>& missing) {
  LadderData d = ladder_frame(spec, plan);
  for (size_t i = 0; i < plan.runs.size(); ++i) {
    const auto dir = fs::path(spec.out) / plan.runs[i].name;
    if (!fs::is_regular_file(dir / "eval.json")) {
      missing.push_back(plan.runs[i].name);
      continue;
    }
    const auto& e = plan.entries[plan.run_entry[i]];
    d.points.push_back({e.member, e.size, plan.run_seed[i], e.n, read_run(dir).val_loss});
  }
  return d;
}

LadderReport analyse_ladder(const LadderData& data, const LadderAnalysisOptions& options) {
  LadderReport r{data, {}, {}, {}};
  std::vector<PowerLaw> starts;
  std::vector<size_t> fitted;  // member indices with a fit
  for (size_t m = 0; m < data.members.size(); ++m) {
    LadderFit fit;
    fit.member = data.members[m];
    if (check_member(data, m, fit, r.warnings)) {
      std::vector<double> n, loss;
      for (const auto* p : points_of(data, m)) n.push_back(p->n), loss.push_back(p->loss);
      const auto f = fit_power_law(n, loss, {options.huber_delta});
      fit.fitted = true, fit.law = f.law, fit.objective = f.objective;
      if (f.law.alpha < 1e-6 || f.law.alpha > 3.0 - 1e-6)
        r.warnings.push_back(fmt::format("member '{}': the fitted exponent sits at its bound ({:.3g})", fit.member, f.law.alpha));
      if (f.law.E < 1.01e-4 * *std::min_element(loss.begin(), loss.end()))
        r.warnings.push_back(fmt::format("member '{}': E sits at its lower bound: the ladder does not show where the "
                                         "loss levels off, and E, A and alpha trade off freely", fit.member));
    }
    r.fits.push_back(fit);
  }
  for (size_t m = 0; m < r.fits.size(); ++m) starts.push_back(r.fits[m].fitted ? r.fits[m].law : PowerLaw{1, 1, 0.3});
  if (std::none_of(r.fits.begin(), r.fits.end(), [](const LadderFit& f) { return f.fitted; }))
    throw UsageError("ladder report: no member has finished runs at 3 sizes with losses that fall with size");
  std::vector<ScalingObservation> usable;  // the fitted members' points
  for (const auto& p : data.points)
    if (r.fits[p.member].fitted) usable.push_back(p);
  std::set<std::pair<size_t, int64_t>> cells;
  for (const auto& p : usable) cells.insert({p.size, p.seed});
  if (cells.size() < 10)
    r.warnings.push_back(fmt::format("only {} cells (size, seed): bootstrap intervals from so few points understate "
                                     "the uncertainty; add seeds or sizes", cells.size()));
  const auto reps = bootstrap_power_laws(usable, starts, {options.bootstrap, options.seed, {options.huber_delta}});
  double lo = INFINITY, hi = 0;
  for (const auto& p : usable) lo = std::min(lo, p.n), hi = std::max(hi, p.n);
  for (auto& fit : r.fits) {
    if (!fit.fitted) continue;
    const auto& rep = reps[static_cast<size_t>(&fit - r.fits.data())];
    std::vector<double> E, A, alpha;
    for (const auto& l : rep) E.push_back(l.E), A.push_back(l.A), alpha.push_back(l.alpha);
    fit.E = percentile_interval(E), fit.A = percentile_interval(A), fit.alpha = percentile_interval(alpha);
    fit.replicates = std::count_if(E.begin(), E.end(), [](double v) { return std::isfinite(v); });
    fill_band(fit, rep, lo, hi);
  }
  if (!r.fits[data.baseline].fitted) {
    r.warnings.push_back("the baseline '" + data.members[data.baseline] + "' is not fitted: no gaps");
    return r;
  }
  for (size_t m = 0; m < r.fits.size(); ++m) {
    if (m == data.baseline || !r.fits[m].fitted) continue;
    for (size_t s = 0; s < data.sizes.size(); ++s) {
      auto g = gap_at(r, reps, m, data.sizes[s], data.size_n[s], lo, hi);
      g.observed = observed_gap(data, m, s);
      r.gaps.push_back(g);
    }
    if (data.target_n > 0) r.gaps.push_back(gap_at(r, reps, m, "target", data.target_n, lo, hi));
  }
  return r;
}

}  // namespace ember
