// `ember capacity` as a library call: load an embedding matrix, estimate epsilon, apply the
// capacity formulas; render one result or a comparison of several as JSON or a table.
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "ember/analysis/capacity_formulas.h"
#include "ember/analysis/embedding_source.h"
#include "ember/analysis/epsilon.h"

namespace ember {

struct CapacityReport {
  std::string input, format, tensor, dtype;
  int64_t input_rows = 0;
  EpsilonEstimate estimate;
  CapacityBounds bounds;  // at d and estimate.epsilon()
};

struct CapacityOptions {
  std::string tensor;  // "" = find the input embedding
  EpsilonOptions epsilon;
  FullFormConstants constants;
  at::Device device = at::kCPU;
};

CapacityReport capacity_report(const std::string& input, const CapacityOptions& options);
CapacityReport capacity_report(const EmbeddingMatrix& matrix, const CapacityOptions& options);

nlohmann::json bounds_json(const CapacityBounds& b);   // class and labelled bounds
nlohmann::json report_json(const CapacityReport& r);   // everything, histogram excluded
std::string bounds_table(const std::vector<CapacityBounds>& rows);
std::string comparison_table(const std::vector<CapacityReport>& reports);
std::string formulas_legend(const FullFormConstants& constants);

}  // namespace ember
