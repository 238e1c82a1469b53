// Analysis as operators: the tapered width schedule (model/taper.h), the embedding epsilon
// (analysis/epsilon.h) and the capacity bounds (analysis/capacity_formulas.h). python/ember wraps
// them in functions with named results.
#include <torch/library.h>

#include <cmath>

#include "ember/analysis/capacity_formulas.h"
#include "ember/analysis/epsilon.h"
#include "ember/model/taper.h"
#include "python/csrc/op_args.h"

namespace ember::ops {
namespace {

std::vector<int64_t> taper_widths_op(c10::string_view schedule, int64_t n_layers, int64_t d_base, double start,
                                     double end, double steepness, int64_t multiple_of, std::vector<double> groups) {
  TaperConfig cfg;
  cfg.schedule = named<TaperSchedule>(std::string(schedule), "schedule");
  cfg.start = start, cfg.end = end, cfg.steepness = steepness, cfg.multiple_of = multiple_of;
  cfg.groups = std::move(groups);
  return taper_widths(cfg, n_layers, d_base);
}

// (mu, sigma, min cosine, max cosine, ci_low, ci_high, pairs, rows used); NaN where the method gives none.
std::tuple<double, double, double, double, double, double, int64_t, int64_t> epsilon_op(
    const at::Tensor& matrix, c10::string_view method, int64_t block, int64_t sample_pairs, int64_t seed) {
  EpsilonOptions o;
  o.method = named<EpsilonMethod>(std::string(method), "method");
  o.block = block, o.sample_pairs = sample_pairs, o.seed = static_cast<uint64_t>(seed);
  const auto rows = unit_rows(matrix.detach(), "the matrix", matrix.device());
  const auto e = estimate_epsilon(rows, o);
  return {e.mu, e.sigma, e.min_cosine, e.max_cosine, e.ci_low, e.ci_high, e.pairs, e.rows};
}

// (class, ln k of the full form, of the single-constant form, of JL with C = 8, of JL with C = 3.029)
std::tuple<std::string, double, double, double, double> capacity_op(double d, double eps) {
  const auto b = capacity_bounds(d, eps);
  auto ln = [](const CapacityBound& x) { return x.defined ? x.ln_k : std::nan(""); };
  return {class_label(b.cls), ln(b.full), ln(b.single), ln(b.jl), ln(b.jl_random)};
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(ember, m) {
  m.def("taper_widths(str schedule, int n_layers, int d_base, float start=1.5, float end=0.5, float steepness=10., "
        "int multiple_of=16, float[] groups=[1.5, 1., 0.5]) -> int[]",
        TORCH_FN(taper_widths_op));
  m.def("epsilon(Tensor matrix, str method='exact', int block=4096, int sample_pairs=1000000, int seed=0) "
        "-> (float, float, float, float, float, float, int, int)",
        TORCH_FN(epsilon_op));
  m.def("capacity_bounds(float d, float eps) -> (str, float, float, float, float)", TORCH_FN(capacity_op));
}

}  // namespace ember::ops
