#include "ember/analysis/power_law_fit.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "ember/analysis/levenberg_marquardt.h"
#include "ember/util/error.h"

namespace ember {
namespace {

// The data in the fit's own coordinates: u = log(n / n_ref) about the geometric mean of the sizes,
// so that the amplitude b (log of A n_ref^(-alpha)) and alpha are not as tied as log A and alpha are.
struct LogData {
  std::vector<double> u, log_loss;
  double log_n_ref = 0, min_loss = 0, max_loss = 0;
};

LogData log_data(const std::vector<double>& n, const std::vector<double>& loss) {
  if (n.size() != loss.size()) throw UsageError("power-law fit: sizes and losses differ in length");
  std::set<double> distinct;
  LogData d;
  for (size_t i = 0; i < n.size(); ++i) {
    if (!(n[i] > 0) || !(loss[i] > 0) || !std::isfinite(n[i]) || !std::isfinite(loss[i]))
      throw UsageError("power-law fit: sizes and losses must be positive and finite");
    distinct.insert(n[i]);
    d.log_n_ref += std::log(n[i]) / static_cast<double>(n.size());
  }
  if (distinct.size() < 3)
    throw UsageError("power-law fit: needs at least 3 distinct sizes for E, A and alpha, got " +
                     std::to_string(distinct.size()));
  for (size_t i = 0; i < n.size(); ++i) d.u.push_back(std::log(n[i]) - d.log_n_ref), d.log_loss.push_back(std::log(loss[i]));
  d.min_loss = *std::min_element(loss.begin(), loss.end());
  d.max_loss = *std::max_element(loss.begin(), loss.end());
  return d;
}

// x = (log E, b, alpha): log L(u) = logsumexp(log E, b - alpha u)  (Hoffmann et al. 2022, eq. 10 with D fixed)
double log_prediction(const std::vector<double>& x, double u) {
  const double p = x[0], q = x[1] - x[2] * u, hi = std::max(p, q);
  return hi + std::log(std::exp(p - hi) + std::exp(q - hi));
}

PowerLaw to_law(const std::vector<double>& x, double log_n_ref) {
  return {std::exp(x[0]), std::exp(x[1] + x[2] * log_n_ref), x[2]};
}

PowerLawFit fit_from(const LogData& d, std::vector<double> x0, const PowerLawFitOptions& o) {
  LeastSquaresProblem problem;
  // LM minimises sum rho_i^2; rho = sign(r) sqrt(2 huber(r)) makes that sum 2 x the Huber objective
  // (Besiroglu et al. 2024: Huber on log-loss residuals), and rho is smooth where Huber's joints are.
  problem.residuals = [&](const std::vector<double>& x, std::vector<double>& rho) {
    rho.resize(d.u.size());
    for (size_t i = 0; i < d.u.size(); ++i) {
      const double r = log_prediction(x, d.u[i]) - d.log_loss[i];
      rho[i] = std::copysign(std::sqrt(2 * huber(r, o.huber_delta)), r);
    }
  };
  problem.lower = {std::log(1e-4 * d.min_loss), -30.0, 0.0};
  problem.upper = {std::log(d.max_loss), 30.0, o.max_alpha};
  LeastSquaresOptions lm;
  lm.max_iterations = 100;
  lm.tolerance = 1e-10;
  const auto res = levenberg_marquardt(problem, std::move(x0), lm);
  return {to_law(res.x, d.log_n_ref), res.cost / 2, res.converged};
}

}  // namespace

double PowerLaw::operator()(double n) const { return E + A * std::pow(n, -alpha); }

double huber(double r, double delta) {
  const double a = std::abs(r);
  return a <= delta ? 0.5 * r * r : delta * (a - 0.5 * delta);
}

PowerLawFit fit_power_law_from(const std::vector<double>& n, const std::vector<double>& loss, const PowerLaw& start,
                               const PowerLawFitOptions& options) {
  const auto d = log_data(n, loss);
  const double E = std::clamp(start.E, 1e-4 * d.min_loss, d.max_loss);
  const double b = std::log(std::max(start.A, 1e-300)) - start.alpha * d.log_n_ref;
  return fit_from(d, {std::log(E), std::clamp(b, -30.0, 30.0), start.alpha}, options);
}

PowerLawFit fit_power_law(const std::vector<double>& n, const std::vector<double>& loss,
                          const PowerLawFitOptions& options) {
  const auto d = log_data(n, loss);
  PowerLawFit best;
  best.objective = INFINITY;
  for (double alpha : {0.05, 0.15, 0.3, 0.6, 1.2})
    for (double fraction : {0.1, 0.5, 0.8, 0.95}) {  // E as a fraction of the lowest loss
      const double E = fraction * d.min_loss;
      double b = 0;  // log(L - E) = b - alpha u, averaged over the points
      for (size_t i = 0; i < d.u.size(); ++i)
        b += (std::log(std::max(std::exp(d.log_loss[i]) - E, 1e-6)) + alpha * d.u[i]) / static_cast<double>(d.u.size());
      auto fit = fit_from(d, {std::log(E), std::clamp(b, -30.0, 30.0), std::min(alpha, options.max_alpha)}, options);
      if (fit.objective < best.objective) best = fit;
    }
  return best;
}

}  // namespace ember
