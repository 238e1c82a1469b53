#include "ember/analysis/capacity_report.h"

#include <fmt/format.h>

#include <cmath>

namespace ember {
namespace {

nlohmann::json number_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); }

nlohmann::json bound_json(const CapacityBound& b, const std::string& formula) {
  nlohmann::json j = {{"value", number_or_null(b.value())}, {"log10", number_or_null(b.log10())}, {"formula", formula}};
  if (!b.defined) j["note"] = "n/a: epsilon is outside (0, 1]";
  return j;
}

std::string dtype_name(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return "fp32";
    case at::kHalf: return "fp16";
    case at::kBFloat16: return "bf16";
    case at::kDouble: return "fp64";
    default: return c10::toString(t);
  }
}

// The headline: the full form for class 2; the paper reports other geometries as indeterminate.
std::string headline(const CapacityBounds& b) {
  return b.cls == CapacityClass::near_orthogonal ? format_capacity(b.full) : "indeterminate";
}

std::string shorten(const std::string& s, size_t width) {
  return s.size() <= width ? s : "..." + s.substr(s.size() - (width - 3));
}

std::string mode_cell(const EpsilonEstimate& e) {
  switch (e.method) {
    case EpsilonMethod::exact: return "exact";
    case EpsilonMethod::moments: return "exact*";
    case EpsilonMethod::sampled: break;
  }
  return "sampled*";
}

}  // namespace

CapacityReport capacity_report(const std::string& input, const CapacityOptions& o) {
  return capacity_report(load_embedding_matrix(input, o.tensor), o);
}

CapacityReport capacity_report(const EmbeddingMatrix& m, const CapacityOptions& o) {
  CapacityReport r;
  r.input = m.input;
  r.format = m.format;
  r.tensor = m.tensor;
  r.head = m.head;
  r.dtype = dtype_name(m.matrix.scalar_type());
  r.input_rows = m.matrix.dim() > 0 ? m.matrix.size(0) : 0;
  const UnitRows rows = unit_rows(m.matrix, m.where(), o.device);
  EpsilonOptions eo = o.epsilon;
  if (!eo.progress_label.empty()) eo.progress_label += " " + m.input;
  r.estimate = estimate_epsilon(rows, eo);
  r.bounds = capacity_bounds(static_cast<double>(r.estimate.dim), r.estimate.epsilon(), o.constants);
  r.bounds_3sigma = capacity_bounds(static_cast<double>(r.estimate.dim), r.estimate.epsilon_3sigma(), o.constants);
  return r;
}

double vocabulary_directions(const CapacityReport& r) {
  if (r.head == HeadTying::unknown) return 0.0;
  return static_cast<double>(r.estimate.rows) * (r.head == HeadTying::untied ? 2.0 : 1.0);  // ~2V untied, V tied
}

std::optional<CapacityBound> feature_directions(const CapacityReport& r) {
  if (r.head == HeadTying::unknown || r.bounds.cls != CapacityClass::near_orthogonal || !r.bounds.full.defined) return std::nullopt;
  // ln(k - n) = ln k + ln(1 - n / k), in logs because k may exceed any double
  const double ln_k = r.bounds.full.ln_k, ratio = vocabulary_directions(r) * std::exp(-ln_k);
  return CapacityBound{ratio >= 1.0 ? -INFINITY : ln_k + std::log1p(-ratio)};
}

nlohmann::json bounds_json(const CapacityBounds& b) {
  const auto& k = b.constants;
  auto full = bound_json(b.full, "max_k = ceil((d exp((eps^2 d^c / C)^(1/b)))^(1/a))");
  full["constants"] = {{"C", k.C}, {"a", k.a}, {"b", k.b}, {"c", k.c}};
  full["applicable"] = b.cls == CapacityClass::near_orthogonal;
  auto single = bound_json(b.single, "k <= d exp(d eps^2 / C)");
  single["C"] = kSingleConstantC;
  auto jl = bound_json(b.jl, "k <= exp(d eps^2 / C)");
  jl["C"] = kJlC;
  auto jl_random = bound_json(b.jl_random, "k <= exp(d eps^2 / C)");
  jl_random["C"] = kJlRandomC;
  return {{"d", b.d},
          {"epsilon", b.eps},
          {"class", class_label(b.cls)},
          {"class_description", class_description(b.cls)},
          {"capacity", headline(b)},
          {"capacity_full_form", full},
          {"capacity_single_constant", single},
          {"capacity_jl", jl},
          {"capacity_jl_random_fit", jl_random}};
}

nlohmann::json report_json(const CapacityReport& r) {
  const auto& e = r.estimate;
  nlohmann::json j = {{"input", r.input},
                      {"format", r.format},
                      {"tensor", r.tensor},
                      {"dtype", r.dtype},
                      {"input_rows", r.input_rows},
                      {"zero_rows_dropped", e.dropped_zero_rows},
                      {"V", e.rows},
                      {"d", e.dim},
                      {"method", method_label(e.method)},
                      {"sampled", e.method == EpsilonMethod::sampled},
                      {"pairs", e.pairs},
                      {"mu", e.mu},
                      {"sigma", e.sigma},
                      {"epsilon", e.epsilon()},
                      {"epsilon_3sigma", e.epsilon_3sigma()},
                      {"min_cosine", number_or_null(e.min_cosine)},
                      {"max_cosine", number_or_null(e.max_cosine)},
                      {"seconds", e.seconds}};
  if (!e.histogram.empty()) j["histogram"] = e.histogram;  // equal bins over [-1, 1]
  const bool known = r.head != HeadTying::unknown;
  j["head"] = known ? nlohmann::json(enum_name(r.head)) : nlohmann::json();
  j["vocabulary_directions"] = !known ? nlohmann::json() : nlohmann::json(vocabulary_directions(r));
  const auto features = feature_directions(r);
  j["feature_directions"] =
      features ? bound_json(*features, "full-form capacity - vocabulary directions") : nlohmann::json();
  if (e.method == EpsilonMethod::sampled)
    j["epsilon_ci"] = {{"level", e.confidence}, {"low", e.ci_low}, {"high", e.ci_high}};
  const auto bounds = bounds_json(r.bounds);  // named: items() of a temporary would dangle
  for (const auto& [key, value] : bounds.items())
    if (key != "d" && key != "epsilon") j[key] = value;
  const auto& b3 = r.bounds_3sigma;  // the exaggerated variant: every bound at mu + 3 sigma
  j["capacity_3sigma"] = {{"epsilon", b3.eps},
                          {"class", class_label(b3.cls)},
                          {"capacity", headline(b3)},
                          {"capacity_full_form", bound_json(b3.full, "full form at mu + 3 sigma")}};
  return j;
}

std::string formulas_legend(const FullFormConstants& k) {
  return fmt::format(
      "capacity (headline): full form max_k = ceil((d exp((eps^2 d^c / C)^(1/b)))^(1/a)), C={:.6g} a={:.6g} "
      "b={:.6g} c={:.6g}\n"
      "single-C: k <= d exp(d eps^2 / {}); JL: k <= exp(d eps^2 / C), C = {} (textbook) or {} (fitted to "
      "random vectors)\n"
      "eps = mu + 2 sigma of the cosine over all pairs i < j; class 2 (eps < 0.1) has a finite capacity; "
      "class 1 (eps > 0.2) and 0.1..0.2 are indeterminate\n",
      k.C, k.a, k.b, k.c, kSingleConstantC, kJlC, kJlRandomC);
}

std::string bounds_table(const std::vector<CapacityBounds>& rows) {
  std::string out = fmt::format("{:>8} {:>9} {:>14} {:>16} {:>12} {:>10} {:>12}\n", "d_model", "epsilon", "class",
                                "capacity (full)", "single-C", "JL C=8", "JL C=3.029");
  for (const auto& b : rows)
    out += fmt::format("{:>8} {:>9.5f} {:>14} {:>16} {:>12} {:>10} {:>12}\n", b.d, b.eps, class_label(b.cls),
                       headline(b), format_capacity(b.single), format_capacity(b.jl), format_capacity(b.jl_random));
  return out + "\n" + formulas_legend(rows.empty() ? FullFormConstants{} : rows.front().constants);
}

std::string comparison_table(const std::vector<CapacityReport>& reports) {
  size_t width = 5;
  for (const auto& r : reports) width = std::max(width, std::min<size_t>(r.input.size(), 40));
  std::string out = fmt::format("{:<{}} {:>8} {:>6} {:>9} {:>8} {:>8} {:>8} {:>6} {:>15} {:>10} {:>9} {:>13} {:>8}\n",
                                "input", width, "V", "d", "mu", "sigma", "epsilon", "mu+3sig", "class",
                                "capacity(full)", "single-C", "JL C=8", "cap(mu+3sig)", "mode");
  std::string notes;
  for (const auto& r : reports) {
    const auto& e = r.estimate;
    out +=
        fmt::format("{:<{}} {:>8} {:>6} {:>9.5f} {:>8.5f} {:>8.5f} {:>8.5f} {:>6} {:>15} {:>10} {:>9} {:>13} {:>8}\n",
                    shorten(r.input, width), width, e.rows, e.dim, e.mu, e.sigma, e.epsilon(), e.epsilon_3sigma(),
                    class_label(r.bounds.cls), headline(r.bounds), format_capacity(r.bounds.single),
                    format_capacity(r.bounds.jl), headline(r.bounds_3sigma), mode_cell(e));
    if (!r.bounds.full.defined)
      notes += fmt::format("{}: epsilon {:.5f} is outside (0, 1] (a degenerate geometry): class {}, bounds n/a\n",
                           r.input, e.epsilon(), class_label(r.bounds.cls));
    if (const auto features = feature_directions(r))
      notes += fmt::format("{}: {} head: the vocabulary takes ~{} = {} directions, leaving {} for features\n", r.input,
                           enum_name(r.head), r.head == HeadTying::tied ? "V" : "2V", format_capacity({std::log(vocabulary_directions(r))}),
                           format_capacity(*features));
    if (e.dropped_zero_rows)
      notes += fmt::format("{}: {} zero row(s) of {} dropped\n", r.input, e.dropped_zero_rows, r.input_rows);
    if (e.method == EpsilonMethod::sampled)
      notes += fmt::format("* {}: SAMPLED estimate from {} random pairs; epsilon {:.0f}% CI [{:.5f}, {:.5f}]\n",
                           r.input, e.pairs, 100 * e.confidence, e.ci_low, e.ci_high);
    if (e.method == EpsilonMethod::moments)
      notes += fmt::format("* {}: exact mu and sigma over all {} pairs from the Gram identity (no histogram)\n",
                           r.input, e.pairs);
  }
  return out + notes + "\n" + formulas_legend(reports.empty() ? FullFormConstants{} : reports.front().bounds.constants);
}

}  // namespace ember
