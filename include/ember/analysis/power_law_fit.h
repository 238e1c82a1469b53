// The saturating power law of loss in model size, L(N) = E + A N^(-alpha), fitted as Hoffmann et al.
// (2022, approach 3) fit L(N, D) and Besiroglu et al. (2024) refit it: a Huber loss on the residuals
// of log-loss, minimised from a grid of starts (docs/experiments.md, "Ladders").
#pragma once
#include <vector>

namespace ember {

struct PowerLaw {
  double E = 0, A = 0, alpha = 0;
  double operator()(double n) const;  // E + A n^(-alpha)
};

struct PowerLawFitOptions {
  double huber_delta = 1e-3;  // Hoffmann et al.'s delta on log-loss residuals
  double max_alpha = 3.0;
};

struct PowerLawFit {
  PowerLaw law;
  double objective = 0;  // sum of Huber losses of the log residuals at the optimum
  bool converged = false;
};

// Fits (n_i, loss_i) from a grid of starts and keeps the lowest objective. UsageError with fewer
// than 3 distinct sizes, or a size or loss that is not positive.
PowerLawFit fit_power_law(const std::vector<double>& n, const std::vector<double>& loss,
                          const PowerLawFitOptions& options = {});
// The same from one start (a bootstrap replicate starts from the full data's fit).
PowerLawFit fit_power_law_from(const std::vector<double>& n, const std::vector<double>& loss, const PowerLaw& start,
                               const PowerLawFitOptions& options = {});

// Huber's loss of a residual: r^2 / 2 within delta, delta (|r| - delta / 2) beyond.
double huber(double r, double delta);

}  // namespace ember
