#include "ember/util/student_t.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "ember/util/error.h"

namespace ember {
namespace {

// The continued fraction of I_x(a, b) (Numerical Recipes 6.4, betacf), evaluated by the modified
// Lentz method; it converges fast for x < (a + 1) / (a + b + 2).
double incomplete_beta_fraction(double a, double b, double x) {
  constexpr double tiny = 1e-300, eps = 1e-16;
  const double qab = a + b, qap = a + 1, qam = a - 1;
  double c = 1, d = 1 - qab * x / qap;
  if (std::fabs(d) < tiny) d = tiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 10000; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((qam + m2) * (a + m2));  // the even step d_{2m}
    d = 1 + aa * d, c = 1 + aa / c;
    if (std::fabs(d) < tiny) d = tiny;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1 / d, h *= d * c;
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));  // the odd step d_{2m+1}
    d = 1 + aa * d, c = 1 + aa / c;
    if (std::fabs(d) < tiny) d = tiny;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    const double del = d * c;
    h *= del;
    if (std::fabs(del - 1) < eps) break;
  }
  return h;
}

}  // namespace

double regularized_incomplete_beta(double a, double b, double x) {
  if (!(a > 0) || !(b > 0))
    throw UsageError(fmt::format("incomplete beta: a and b must be > 0, got a = {}, b = {}", a, b));
  if (!(x >= 0 && x <= 1)) throw UsageError(fmt::format("incomplete beta: x must be in [0, 1], got {}", x));
  if (x == 0 || x == 1) return x;
  // x^a (1 - x)^b / B(a, b), with B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b)
  const double front =
      std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * incomplete_beta_fraction(a, b, x) / a;
  return 1 - front * incomplete_beta_fraction(b, a, 1 - x) / b;  // I_x(a, b) = 1 - I_{1-x}(b, a)
}

double student_t_cdf(double t, double df) {
  if (!(df > 0)) throw UsageError(fmt::format("Student t: degrees of freedom must be > 0, got {}", df));
  if (std::isnan(t)) return t;
  if (std::isinf(t)) return t > 0 ? 1 : 0;
  // P(|T| > |t|) = I_{df / (df + t^2)}(df / 2, 1 / 2)
  const double tail = 0.5 * regularized_incomplete_beta(df / 2, 0.5, df / (df + t * t));
  return t > 0 ? 1 - tail : tail;
}

double student_t_quantile(double p, double df) {
  if (!(p > 0 && p < 1)) throw UsageError(fmt::format("Student t quantile: p must be in (0, 1), got {}", p));
  if (!(df > 0)) throw UsageError(fmt::format("Student t: degrees of freedom must be > 0, got {}", df));
  if (p == 0.5) return 0;
  // Bisection on the upper tail q = P(T > t) = 1 - p (for p > 1/2; the distribution is symmetric),
  // which keeps its precision where p is close to 1.
  const double q = p > 0.5 ? 1 - p : p;
  auto upper_tail = [df](double t) { return 0.5 * regularized_incomplete_beta(df / 2, 0.5, df / (df + t * t)); };
  double lo = 0, hi = 1;
  while (upper_tail(hi) > q && hi < std::numeric_limits<double>::max() / 4) hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-15 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (upper_tail(mid) > q ? lo : hi) = mid;
  }
  const double t = 0.5 * (lo + hi);
  return p > 0.5 ? t : -t;
}

}  // namespace ember
