// `ember capacity` as a library call: load an embedding matrix, estimate epsilon, apply the
// capacity formulas; render one result or a comparison of several as JSON or a table.
#pragma once
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "ember/analysis/capacity_formulas.h"
#include "ember/analysis/embedding_source.h"
#include "ember/analysis/epsilon.h"

namespace ember {

struct CapacityReport {
  std::string input, format, tensor, dtype;
  HeadTying head = HeadTying::unknown;  // see EmbeddingMatrix::head
  int64_t input_rows = 0;
  EpsilonEstimate estimate;
  CapacityBounds bounds;         // at d and estimate.epsilon()
  CapacityBounds bounds_3sigma;  // at d and estimate.epsilon_3sigma(), the exaggerated variant
};

struct CapacityOptions {
  std::string tensor;  // "" = find the input embedding
  EpsilonOptions epsilon;
  FullFormConstants constants;
  at::Device device = at::kCPU;
};

CapacityReport capacity_report(const std::string& input, const CapacityOptions& options);
CapacityReport capacity_report(const EmbeddingMatrix& matrix, const CapacityOptions& options);

// docs/capacity.md bookkeeping: the vocabulary takes ~V directions when the head is tied and
// ~2V when untied (0 when unknown); the rest of the full-form capacity is left for features
// (nullopt unless the head is known and the class is 2; a value of 0 when nothing is left).
double vocabulary_directions(const CapacityReport& r);
std::optional<CapacityBound> feature_directions(const CapacityReport& r);

nlohmann::json bounds_json(const CapacityBounds& b);  // class and labelled bounds
nlohmann::json report_json(const CapacityReport& r);  // everything; "histogram": bin counts over [-1, 1] when computed
std::string bounds_table(const std::vector<CapacityBounds>& rows);
std::string comparison_table(const std::vector<CapacityReport>& reports);
std::string formulas_legend(const FullFormConstants& constants);

}  // namespace ember
