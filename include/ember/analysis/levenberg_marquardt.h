// Levenberg-Marquardt least squares for a handful of parameters: minimises sum_i r_i(x)^2 with a
// central-difference Jacobian and box bounds (steps are clamped into [lower, upper]).
#pragma once
#include <functional>
#include <vector>

namespace ember {

struct LeastSquaresProblem {
  // Fills r (any length >= the number of parameters) for parameters x.
  std::function<void(const std::vector<double>& x, std::vector<double>& r)> residuals;
  std::vector<double> lower, upper;  // empty: unbounded
};

struct LeastSquaresOptions {
  int max_iterations = 500;
  double tolerance = 1e-14;  // stop when the relative decrease of the cost falls below this
};

struct LeastSquaresResult {
  std::vector<double> x;
  double cost = 0.0;  // sum of squared residuals
  int iterations = 0;
  bool converged = false;
};

LeastSquaresResult levenberg_marquardt(const LeastSquaresProblem& problem, std::vector<double> x0,
                                       const LeastSquaresOptions& options = {});

// Solves A x = b for a small dense n x n system (row-major) by Gaussian elimination with partial
// pivoting; returns false when A is singular.
bool solve_dense(std::vector<double> A, std::vector<double> b, std::vector<double>& x);

}  // namespace ember
