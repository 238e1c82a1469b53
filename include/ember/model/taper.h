// Tapered MLP widths (docs/tapered.md): d_ff(l) = d_end + (d_start - d_end) f(l / (L-1)) with
// f linear, cosine or sigmoid; the first and last widths pinned to round(start d_base) and
// round(end d_base), the interior rounded to a multiple q, layers l and L-1-l summing to 2 d_base
// so the parameter and FLOP budget of the uniform stack is kept exactly; or equal groups of layers
// with given width factors.
#pragma once
#include <cstdint>
#include <vector>

#include "ember/config/fields.h"

namespace ember {

enum class TaperSchedule { uniform, linear, cosine, sigmoid, groups };
inline std::span<const EnumName<TaperSchedule>> enum_names(TaperSchedule) {
  static constexpr EnumName<TaperSchedule> names[] = {{TaperSchedule::uniform, "uniform"},
                                                      {TaperSchedule::linear, "linear"},
                                                      {TaperSchedule::cosine, "cosine"},
                                                      {TaperSchedule::sigmoid, "sigmoid"},
                                                      {TaperSchedule::groups, "groups"}};
  return names;
}

// model.mlp.taper.*: how d_ff shrinks with depth at a fixed budget (docs/tapered.md).
struct TaperConfig {
  TaperSchedule schedule = TaperSchedule::uniform;
  double start = 1.5;                            // rho_start: first layer width = start * d_ff
  double end = 0.5;                              // rho_end: last layer width = end * d_ff
  double steepness = 10.0;                       // sigmoid k
  int64_t multiple_of = 16;                      // interior widths rounded to this multiple
  std::vector<double> groups = {1.5, 1.0, 0.5};  // groups: factor per equal group of layers

  void fields(FieldVisitor& v);
};

// The schedule's f(t), t in [0, 1]; f(0) = 1, f(1) = 0, f(t) + f(1 - t) = 1.
double taper_profile(const TaperConfig& cfg, double t);

// One width per layer. Throws ConfigError naming the offending values when the settings cannot
// keep the budget (start + end != 2, d_base not a multiple of q, widths reaching zero, groups
// that do not average 1 or do not divide L).
std::vector<int64_t> taper_widths(const TaperConfig& cfg, int64_t n_layers, int64_t d_base);

}  // namespace ember
