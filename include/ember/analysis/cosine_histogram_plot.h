// The paper's figure: a histogram of the pairwise cosine similarities of an embedding matrix with
// mu and epsilon = mu + 2 sigma marked; several matrices are overlaid (as densities) for comparison.
// Written as PNG or SVG by the file's extension (plot_output.h).
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "ember/analysis/plot_output.h"

namespace ember {

struct HistogramSeries {
  std::string label;
  std::vector<int64_t> counts;  // equal bins over [-1, 1] (CosineStats::histogram)
  double mu = 0.0, epsilon = 0.0;
  bool sampled = false;
};

// The x axis: the occupied bins of every series, padded, widened to show each mu and epsilon marker
// (epsilon = mu + 2 sigma may exceed 1).
std::pair<double, double> cosine_axis_range(const std::vector<HistogramSeries>& series);

// Throws UsageError when plotting is unavailable or a series has no histogram; Error on failure.
void write_cosine_histogram(const std::filesystem::path& figure, const std::vector<HistogramSeries>& series);

}  // namespace ember
