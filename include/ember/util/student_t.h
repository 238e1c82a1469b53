// Student's t distribution for confidence intervals over a few seeds (experiment/paired_stats.h):
// the CDF through the regularized incomplete beta function, the quantile by bisection on it.
#pragma once

namespace ember {

// I_x(a, b) = B(x; a, b) / B(a, b) for a, b > 0 and x in [0, 1] (a continued fraction, Lentz's
// method). UsageError naming the argument outside its range.
double regularized_incomplete_beta(double a, double b, double x);

// P(T <= t) for T ~ Student t with df > 0 degrees of freedom (df need not be an integer).
double student_t_cdf(double t, double df);

// The t with P(T <= t) = p, for p in (0, 1) and df > 0; e.g. (0.975, 4) -> 2.7764451.
double student_t_quantile(double p, double df);

}  // namespace ember
