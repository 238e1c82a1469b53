// Fitting the capacity formulas to packing-simulation points (k, d, eps*) by least squares on
// epsilon, as the paper did (docs/capacity.md): the standard JL form to random packings, the
// single-constant and the full four-constant forms to optimised ones; R^2, MAPE and RMSE.
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "ember/analysis/capacity_formulas.h"
#include "ember/analysis/packing_simulation.h"
#include "ember/config/enum_names.h"

namespace ember {

enum class CapacityForm { jl, single, full };
inline std::span<const EnumName<CapacityForm>> enum_names(CapacityForm) {
  static constexpr EnumName<CapacityForm> names[] = {
      {CapacityForm::jl, "jl"}, {CapacityForm::single, "single"}, {CapacityForm::full, "full"}};
  return names;
}
// Which packing points a form is fitted to (--kind).
enum class FitPoints { automatic, random, optimised, all };
inline std::span<const EnumName<FitPoints>> enum_names(FitPoints) {
  static constexpr EnumName<FitPoints> names[] = {{FitPoints::automatic, "auto"},
                                                  {FitPoints::random, "random"},
                                                  {FitPoints::optimised, "optimised"},
                                                  {FitPoints::all, "all"}};
  return names;
}

std::string form_formula(CapacityForm f);          // the eps(k, d) it fits
CapacityForm parse_form(const std::string& name);  // UsageError on anything else

// eps(k, d) of a form with parameters {C} or {C, a, b, c}.
double form_epsilon(CapacityForm f, const std::vector<double>& params, double k, double d);

struct CapacityFit {
  CapacityForm form = CapacityForm::full;
  FitPoints points_kind = FitPoints::all;  // which points were fitted (never automatic)
  int64_t points = 0;
  std::vector<std::string> names;  // "C" or "C", "a", "b", "c"
  std::vector<double> params;
  double r2 = 0.0, mape = 0.0, rmse = 0.0;  // MAPE in percent over points with eps != 0
  int iterations = 0;
  bool converged = false;
  FullFormConstants full_constants() const;  // kFull only
};

// Fits one form to the points (all of them: filter by kind first). Starting points and bounds
// follow the paper: C in [0, 100]; a, b, c in [0.1, 10] from (0.5, 1.0, 1.4, 1.0).
CapacityFit fit_capacity_form(CapacityForm form, const std::vector<PackingPoint>& points);

nlohmann::json fit_json(const CapacityFit& fit);  // form, formula, constants, R^2, MAPE, ...

// The points `choice` selects for fitting `form`, and what it resolved to: automatic is random for
// the JL form, optimised for the others (as the paper fitted them), or all when the points hold
// none of that kind; all keeps every point.
std::pair<std::vector<PackingPoint>, FitPoints> fit_points(const std::vector<PackingPoint>& points, FitPoints choice,
                                                           CapacityForm form);

}  // namespace ember
