#include "ember/experiment/multiple_comparisons.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace ember {

std::vector<double> adjust_p_values(const std::vector<double>& p, Correction correction) {
  std::vector<size_t> tested;  // indices of the finite p values, ascending by p
  for (size_t i = 0; i < p.size(); ++i)
    if (std::isfinite(p[i])) tested.push_back(i);
  std::stable_sort(tested.begin(), tested.end(), [&](size_t a, size_t b) { return p[a] < p[b]; });
  const double m = static_cast<double>(tested.size());
  std::vector<double> out = p;
  double running = 0;  // Holm: adjusted values never decrease along the sorted order
  for (size_t rank = 0; rank < tested.size(); ++rank) {
    const size_t i = tested[rank];
    if (correction == Correction::bonferroni) out[i] = std::min(1.0, m * p[i]);
    if (correction == Correction::holm) {
      running = std::max(running, std::min(1.0, (m - static_cast<double>(rank)) * p[i]));  // (m - i + 1) p_(i)
      out[i] = running;
    }
  }
  return out;
}

}  // namespace ember
