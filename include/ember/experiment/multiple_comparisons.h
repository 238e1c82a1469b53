// Several members compared with one baseline make several tests: at 5% each, one of five members
// with no real difference is called "resolved" about a time in four. The report adjusts each
// metric's p values across the members (docs/experiments.md, "Several members"):
//   holm        Holm's step-down method (default): the i-th smallest of m p values is multiplied by
//               m - i + 1, then made non-decreasing; controls the family-wise error, never weaker
//               than Bonferroni
//   bonferroni  each p times m
//   none        p as it is (each comparison on its own)
#pragma once
#include <span>
#include <vector>

#include "ember/config/enum_names.h"

namespace ember {

enum class Correction { none, holm, bonferroni };
inline std::span<const EnumName<Correction>> enum_names(Correction) {
  static constexpr EnumName<Correction> names[] = {
      {Correction::none, "none"}, {Correction::holm, "holm"}, {Correction::bonferroni, "bonferroni"}};
  return names;
}

// The adjusted p values, in the order given, each at most 1; a NaN (a comparison without a test,
// e.g. one seed) stays NaN and is not counted among the m tests.
std::vector<double> adjust_p_values(const std::vector<double>& p, Correction correction);

}  // namespace ember
