#include "ember/analysis/capacity_fit.h"

#include <fmt/format.h>

#include <cmath>

#include "ember/analysis/levenberg_marquardt.h"
#include "ember/util/error.h"

namespace ember {

std::string form_formula(CapacityForm f) {
  switch (f) {
    case CapacityForm::jl: return "eps = sqrt(C ln(k) / d)";
    case CapacityForm::single: return "eps = sqrt(C ln(k/d) / d)";
    case CapacityForm::full: break;
  }
  return "eps = sqrt(C ln(k^a/d)^b / d^c)";
}

CapacityForm parse_form(const std::string& name) {
  CapacityForm form{};
  if (!enum_from_name(name, form)) throw UsageError("--form: expected jl, single or full, got '" + name + "'");
  return form;
}

double form_epsilon(CapacityForm f, const std::vector<double>& q, double k, double d) {
  switch (f) {
    case CapacityForm::jl: return jl_epsilon(k, d, q[0]);
    case CapacityForm::single: return single_constant_epsilon(k, d, q[0]);
    case CapacityForm::full: break;
  }
  return full_form_epsilon(k, d, FullFormConstants{q[0], q[1], q[2], q[3]});
}

FullFormConstants CapacityFit::full_constants() const {
  if (form != CapacityForm::full || params.size() != 4) throw UsageError("not a fit of the full form");
  return {params[0], params[1], params[2], params[3]};
}

nlohmann::json fit_json(const CapacityFit& f) {
  nlohmann::json params = nlohmann::json::object();
  for (size_t i = 0; i < f.params.size(); ++i) params[f.names[i]] = f.params[i];
  return {{"form", enum_name(f.form)},
          {"formula", form_formula(f.form)},
          {"points_kind", enum_name(f.points_kind)},
          {"points", f.points},
          {"params", params},
          {"r2", f.r2},
          {"mape_percent", f.mape},
          {"rmse", f.rmse},
          {"iterations", f.iterations},
          {"converged", f.converged}};
}

std::pair<std::vector<PackingPoint>, FitPoints> fit_points(const std::vector<PackingPoint>& points, FitPoints choice,
                                                           CapacityForm form) {
  const auto of_kind = [&](PackingKind kind) {
    std::vector<PackingPoint> out;
    for (const auto& p : points)
      if (p.kind == kind) out.push_back(p);
    return out;
  };
  if (choice == FitPoints::automatic) {
    const bool jl = form == CapacityForm::jl;
    auto natural = of_kind(jl ? PackingKind::random : PackingKind::optimised);
    if (natural.empty()) return {points, FitPoints::all};
    return {natural, jl ? FitPoints::random : FitPoints::optimised};
  }
  if (choice == FitPoints::all) return {points, choice};
  return {of_kind(choice == FitPoints::random ? PackingKind::random : PackingKind::optimised), choice};
}

CapacityFit fit_capacity_form(CapacityForm form, const std::vector<PackingPoint>& points) {
  CapacityFit fit;
  fit.form = form;
  fit.points = static_cast<int64_t>(points.size());
  const bool full = form == CapacityForm::full;
  fit.names = full ? std::vector<std::string>{"C", "a", "b", "c"} : std::vector<std::string>{"C"};
  if (points.size() < fit.names.size() + 1)
    throw DataError(fmt::format("fit: the {} form needs more than {} points, got {}", enum_name(form), fit.names.size(),
                                points.size()));
  LeastSquaresProblem problem;
  problem.residuals = [&](const std::vector<double>& q, std::vector<double>& r) {
    r.resize(points.size());
    for (size_t i = 0; i < points.size(); ++i)
      r[i] = form_epsilon(form, q, double(points[i].k), double(points[i].d)) - points[i].eps;
  };
  problem.lower = full ? std::vector<double>{0.0, 0.1, 0.1, 0.1} : std::vector<double>{0.0};
  problem.upper = full ? std::vector<double>{10.0, 10.0, 10.0, 10.0} : std::vector<double>{100.0};
  const auto start = full ? std::vector<double>{0.5, 1.0, 1.4, 1.0} : std::vector<double>{1.0};
  const auto solved = levenberg_marquardt(problem, start);
  fit.params = solved.x;
  fit.iterations = solved.iterations;
  fit.converged = solved.converged;
  // R^2 = 1 - SS_res / SS_tot; MAPE = mean |y - yhat| / |y| (percent, y != 0); RMSE
  double mean = 0.0, ss_tot = 0.0, ape = 0.0;
  int64_t nonzero = 0;
  for (const auto& p : points) mean += p.eps / points.size();
  for (const auto& p : points) {
    const double err = form_epsilon(form, fit.params, double(p.k), double(p.d)) - p.eps;
    ss_tot += (p.eps - mean) * (p.eps - mean);
    if (p.eps != 0) ape += std::abs(err / p.eps), ++nonzero;
  }
  fit.r2 = ss_tot > 0 ? 1.0 - solved.cost / ss_tot : NAN;
  fit.mape = nonzero ? 100.0 * ape / nonzero : NAN;
  fit.rmse = std::sqrt(solved.cost / points.size());
  return fit;
}

}  // namespace ember
