#include "ember/analysis/capacity_formulas.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "ember/util/error.h"

namespace ember {
namespace {

void check_inputs(double d, double eps, const char* what) {
  if (!(d >= 1) || !std::isfinite(d))
    throw UsageError(fmt::format("{}: d_model must be a positive number, got {}", what, d));
  if (!(eps > 0) || !(eps <= 1)) throw UsageError(fmt::format("{}: epsilon must be in (0, 1], got {}", what, eps));
}

// Largest ln k whose ceil() is still exact in a double (2^53).
constexpr double kLnExactInteger = 36.7368005696771;

}  // namespace

double CapacityBound::value() const {
  if (!defined) return std::numeric_limits<double>::quiet_NaN();
  if (ln_k > std::log(std::numeric_limits<double>::max())) return std::numeric_limits<double>::infinity();
  const double k = std::exp(ln_k);
  if (!integer_ceiling || ln_k >= kLnExactInteger) return k;
  if (std::isfinite(direct)) return std::ceil(direct);  // the reference's np.ceil of the same operations
  return std::ceil(k * (1 - 1e-14));                    // robust to exp() rounding an integer up by a few ulps
}

double CapacityBound::log10() const {
  return defined ? ln_k / std::log(10.0) : std::numeric_limits<double>::quiet_NaN();
}

CapacityBound full_form_capacity(double d, double eps, const FullFormConstants& k) {
  check_inputs(d, eps, "full-form capacity");
  // docs/capacity.md: max_k = ceil( ( d exp( (eps^2 d^c / C)^(1/b) ) )^(1/a) ), taken in logs
  const double inner = std::pow(eps * eps * std::pow(d, k.c) / k.C, 1.0 / k.b);
  return {(std::log(d) + inner) / k.a, true, true, std::pow(d * std::exp(inner), 1.0 / k.a)};
}

CapacityBound single_constant_capacity(double d, double eps, double C) {
  check_inputs(d, eps, "single-constant capacity");
  return {std::log(d) + d * eps * eps / C};  // docs/capacity.md: k <= d exp(d eps^2 / C)
}

CapacityBound jl_capacity(double d, double eps, double C) {
  check_inputs(d, eps, "Johnson-Lindenstrauss capacity");
  return {d * eps * eps / C};  // docs/capacity.md: k <= exp(d eps^2 / C)
}

double full_form_epsilon(double k, double d, const FullFormConstants& c) {
  if (k <= d) return 0.0;  // k <= d vectors can be exactly orthogonal
  // docs/capacity.md: eps(k, d) = sqrt( C ln(k^a / d)^b / d^c ); the log's argument is clipped at
  // 1.00001 as in the paper's fit, so that a < 1 cannot produce the log of a number below 1.
  const double ratio = std::max(std::pow(k, c.a) / d, 1.00001);
  return std::sqrt(c.C * std::pow(std::log(ratio), c.b) / std::pow(d, c.c));
}

double single_constant_epsilon(double k, double d, double C) {
  if (k <= d) return 0.0;
  return std::sqrt(C * std::log(std::max(k / d, 1.00001)) / d);  // eps = sqrt(C ln(k/d) / d)
}

double jl_epsilon(double k, double d, double C) {
  if (k <= 1) return 0.0;
  return std::sqrt(C * std::log(k) / d);  // eps = sqrt(C ln k / d)
}

CapacityClass capacity_class(double eps) {
  if (eps <= 0 || eps > 0.2) return CapacityClass::class1;  // eps <= 0: no bound defined (docs/capacity.md)
  if (eps < 0.1) return CapacityClass::near_orthogonal;      // docs/capacity.md: finite for eps < 0.1
  return CapacityClass::indeterminate;
}

std::string class_label(CapacityClass c) {
  switch (c) {
    case CapacityClass::near_orthogonal: return "2";
    case CapacityClass::class1: return "1";
    case CapacityClass::indeterminate: break;
  }
  return "indeterminate";
}

std::string class_description(CapacityClass c) {
  switch (c) {
    case CapacityClass::near_orthogonal:
      return "class 2 (eps < 0.1: near-orthogonal, uses superposition; capacity is finite)";
    case CapacityClass::class1:
      return "class 1 (eps > 0.2 or outside (0, 1]: the capacity formulas do not apply; most tied models)";
    case CapacityClass::indeterminate: break;
  }
  return "indeterminate (0.1 <= eps <= 0.2: between class 1 and class 2)";
}

CapacityBounds capacity_bounds(double d, double eps, const FullFormConstants& constants) {
  CapacityBounds b;
  b.d = d;
  b.eps = eps;
  b.cls = capacity_class(eps);
  b.constants = constants;
  if (!(eps > 0.0 && eps <= 1.0)) {  // degenerate: no formula applies
    b.full = b.single = b.jl = b.jl_random = CapacityBound{0.0, false, false};
    return b;
  }
  b.full = full_form_capacity(d, eps, constants);
  b.single = single_constant_capacity(d, eps);
  b.jl = jl_capacity(d, eps);
  b.jl_random = jl_capacity(d, eps, kJlRandomC);
  return b;
}

std::string format_capacity(const CapacityBound& b) {
  if (!b.defined) return "n/a";
  const double v = b.value();
  if (!std::isfinite(v)) return fmt::format("10^{:.1f}", b.log10());
  return v < 1000 ? fmt::format("{:.3g}", v) : fmt::format("{:.2e}", v);  // 3 significant digits
}

}  // namespace ember
