#include "ember/analysis/levenberg_marquardt.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "ember/util/error.h"

namespace ember {
namespace {

double sum_sq(const std::vector<double>& r) {
  double s = 0.0;
  for (double v : r) s += v * v;
  return std::isfinite(s) ? s : std::numeric_limits<double>::infinity();
}

void clamp_into(const LeastSquaresProblem& p, std::vector<double>& x) {
  for (size_t i = 0; i < x.size(); ++i) {
    if (!p.lower.empty()) x[i] = std::max(x[i], p.lower[i]);
    if (!p.upper.empty()) x[i] = std::min(x[i], p.upper[i]);
  }
}

// J[i * n + j] = d r_i / d x_j by central differences (one-sided at a bound).
std::vector<double> jacobian(const LeastSquaresProblem& p, const std::vector<double>& x, size_t m) {
  const size_t n = x.size();
  std::vector<double> J(m * n), r_plus, r_minus;
  for (size_t j = 0; j < n; ++j) {
    const double h = 1e-6 * std::max(std::abs(x[j]), 1e-3);
    std::vector<double> xp = x, xm = x;
    xp[j] += h, xm[j] -= h;
    clamp_into(p, xp);
    clamp_into(p, xm);
    p.residuals(xp, r_plus);
    p.residuals(xm, r_minus);
    const double step = xp[j] - xm[j];
    for (size_t i = 0; i < m; ++i) J[i * n + j] = step > 0 ? (r_plus[i] - r_minus[i]) / step : 0.0;
  }
  return J;
}

}  // namespace

bool solve_dense(std::vector<double> A, std::vector<double> b, std::vector<double>& x) {
  const size_t n = b.size();
  for (size_t c = 0; c < n; ++c) {
    size_t pivot = c;
    for (size_t r = c + 1; r < n; ++r)
      if (std::abs(A[r * n + c]) > std::abs(A[pivot * n + c])) pivot = r;
    if (std::abs(A[pivot * n + c]) < 1e-300) return false;
    for (size_t k = 0; k < n; ++k) std::swap(A[c * n + k], A[pivot * n + k]);
    std::swap(b[c], b[pivot]);
    for (size_t r = c + 1; r < n; ++r) {
      const double f = A[r * n + c] / A[c * n + c];
      for (size_t k = c; k < n; ++k) A[r * n + k] -= f * A[c * n + k];
      b[r] -= f * b[c];
    }
  }
  x.assign(n, 0.0);
  for (size_t c = n; c-- > 0;) {
    double s = b[c];
    for (size_t k = c + 1; k < n; ++k) s -= A[c * n + k] * x[k];
    x[c] = s / A[c * n + c];
  }
  return true;
}

LeastSquaresResult levenberg_marquardt(const LeastSquaresProblem& p, std::vector<double> x,
                                       const LeastSquaresOptions& o) {
  const size_t n = x.size();
  if ((!p.lower.empty() && p.lower.size() != n) || (!p.upper.empty() && p.upper.size() != n))
    throw UsageError("least squares: bounds and start point differ in length");
  clamp_into(p, x);
  std::vector<double> r;
  p.residuals(x, r);
  LeastSquaresResult res{x, sum_sq(r), 0, false};
  double lambda = 1e-3;
  for (res.iterations = 1; res.iterations <= o.max_iterations; ++res.iterations) {
    const auto J = jacobian(p, res.x, r.size());
    std::vector<double> A(n * n, 0.0), g(n, 0.0);  // J^T J and -J^T r
    for (size_t i = 0; i < r.size(); ++i)
      for (size_t a = 0; a < n; ++a) {
        g[a] -= J[i * n + a] * r[i];
        for (size_t b = 0; b < n; ++b) A[a * n + b] += J[i * n + a] * J[i * n + b];
      }
    bool improved = false;
    while (!improved && lambda < 1e16) {
      auto damped = A;  // (J^T J + lambda diag(J^T J)) delta = -J^T r
      for (size_t a = 0; a < n; ++a) damped[a * n + a] += lambda * std::max(A[a * n + a], 1e-12);
      std::vector<double> delta, trial = res.x, r_trial;
      if (solve_dense(damped, g, delta)) {
        for (size_t a = 0; a < n; ++a) trial[a] += delta[a];
        clamp_into(p, trial);
        p.residuals(trial, r_trial);
        const double cost = sum_sq(r_trial);
        if (cost < res.cost) {
          const double decrease = (res.cost - cost) / std::max(res.cost, 1e-300);
          res.x = trial, r = r_trial, res.cost = cost, improved = true;
          lambda = std::max(lambda / 10.0, 1e-12);
          if (decrease < o.tolerance) {
            res.converged = true;
            return res;
          }
        }
      }
      if (!improved) lambda *= 10.0;  // singular or uphill: damp harder and try again
    }
    if (!improved) {  // no step lowers the cost: a minimum
      res.converged = true;
      return res;
    }
  }
  res.iterations = o.max_iterations;
  return res;
}

}  // namespace ember
