// A low-precision result (bf16, fp16) against an fp64 reference element by element, with a
// tolerance counted in rounding steps of each element: a tolerance relative to the largest value
// cannot see errors in the small entries, so truncating instead of rounding would pass unseen.
// Shared by the unit tests and the GPU checks (tests/gpu), so no GoogleTest here.
#pragma once
#include <ATen/ATen.h>
#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace ember::testing {

// One rounding of a value computed in fp32 (ember's kernels widen bf16 to fp32, compute, and store
// once, kernels/element_math.h): round to nearest is off by at most half a step; fp32's own error, a
// relative 2^-24 per operation, is at most 2^-16 of a bf16 step per operation, so 1/64 of a step
// covers a chain of hundreds. Truncation is off by up to a whole step, in about half the elements by
// more than half of one.
constexpr double kOneRounding = 0.5 + 1.0 / 64;

// The floor below which an element's error is not counted in steps: fp32 arithmetic on terms as
// large as the largest reference value (a sum that cancels to near zero keeps an error of that size).
inline double fp32_floor(const at::Tensor& ref) { return 0x1p-20 * ref.abs().max().item<double>(); }

// The spacing of `type`'s values at each element of ref: 2^(e - p + 1) for |ref| in [2^e, 2^(e+1)),
// p the significand's bits (bf16 8, fp16 11, fp32 24), and the subnormals' spacing below the
// smallest normal (zero included).
inline at::Tensor rounding_step(const at::Tensor& ref, at::ScalarType type) {
  const int bits = type == at::kBFloat16 ? 8 : type == at::kHalf ? 11 : type == at::kFloat ? 24 : 53;
  const int min_exponent = type == at::kHalf ? -14 : type == at::kDouble ? -1022 : -126;
  const auto r = ref.to(at::kDouble);
  const auto exponent = std::get<1>(at::frexp(r)).to(at::kDouble) - 1;  // |r| = m 2^(e + 1), m in [0.5, 1)
  const auto e = at::where(r == 0, at::full_like(r, min_exponent), at::clamp_min(exponent, min_exponent));
  return at::exp2(e - (bits - 1));
}

struct RoundingCheck {
  bool ok = true;
  int64_t outside = 0;  // elements off by more than the tolerance
  std::string worst;    // the element furthest outside it, relative to its tolerance
};

// Whether every element of got (bf16 or fp16) is within steps * rounding_step(ref) + floor of ref.
inline RoundingCheck within_rounding_steps(const at::Tensor& got, const at::Tensor& ref, double steps, double floor) {
  const auto want = ref.to(at::kDouble).cpu().contiguous().view(-1);
  const auto have = got.to(at::kDouble).cpu().contiguous().view(-1);
  const auto step = rounding_step(want, got.scalar_type());
  const auto error = (have - want).abs();
  // NaN in either fails: (error <= tolerance) is false for it.
  const auto bad = at::logical_not(error <= steps * step + floor);
  RoundingCheck check;
  check.outside = bad.sum().item<int64_t>();
  check.ok = check.outside == 0;
  const auto ratio = at::where(at::isnan(error), at::full_like(error, INFINITY), error / (steps * step + floor));
  const int64_t i = ratio.argmax().item<int64_t>();
  check.worst = fmt::format(
      "{} of {} elements outside {} rounding steps + {:.3g}; worst: element {}: got {:.9g}, "
      "fp64 {:.9g}, off by {:.3g} steps",
      check.outside, want.numel(), steps, floor, i, have[i].item<double>(), want[i].item<double>(),
      error[i].item<double>() / step[i].item<double>());
  return check;
}

// A kernel's result against its fp64 reference: bf16 and fp16 within one rounding of each element
// (kOneRounding steps, fp32_floor), the wider types within `tol` of the largest reference value.
inline RoundingCheck close_to_reference(const at::Tensor& got, const at::Tensor& ref, double tol) {
  if (got.scalar_type() == at::kBFloat16 || got.scalar_type() == at::kHalf)
    return within_rounding_steps(got, ref, kOneRounding, fp32_floor(ref));
  const auto want = ref.to(at::kDouble).cpu();
  const double scale = std::max(1e-300, want.abs().max().item<double>());
  const double off = (got.to(at::kDouble).cpu() - want).abs().max().item<double>() / scale;
  RoundingCheck check;
  check.ok = off <= tol;  // false for NaN
  check.outside = check.ok ? 0 : 1;
  check.worst = fmt::format("largest difference {:.3g} of the largest value (tolerance {:.3g})", off, tol);
  return check;
}

}  // namespace ember::testing
