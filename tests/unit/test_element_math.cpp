// The bf16 storage every fused kernel shares (kernels/element_math.h: the CPU loops and the CUDA
// kernels) against torch's own conversion, over every bf16 value and the float bit patterns around
// its rounding ties; and the comparison in rounding steps (rounding_steps.h) the kernels' bf16 tests
// use: it passes a rounded result and refuses a truncated one that a tolerance relative to the
// largest value lets through.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <cstring>

#include "kernels/element_math.h"
#include "rounding_steps.h"

namespace element_math {
namespace {

using ember::elements::Bf16;

float float_of(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Round to nearest, ties to even, as c10::BFloat16 (and so ATen's bf16 casts) does; NaN stays NaN.
TEST(ElementMath, TheBf16StoreRoundsToNearestEvenAsTorchDoes) {
  int64_t checked = 0, wrong = 0;
  uint32_t first_wrong = 0;
  for (uint32_t high = 0; high <= 0xffffu; ++high)
    for (const uint32_t low : {0x0000u, 0x0001u, 0x7fffu, 0x8000u, 0x8001u, 0xc000u, 0xffffu}) {
      const uint32_t bits = high << 16 | low;
      const float v = float_of(bits);
      Bf16 got;
      ember::elements::store(v, &got);
      const bool ok = std::isnan(v) ? std::isnan(ember::elements::widen(got)) : got.bits == c10::BFloat16(v).x;
      ++checked;
      if (!ok && wrong++ == 0) first_wrong = bits;
    }
  EXPECT_EQ(wrong, 0) << "of " << checked << " floats; the first: bits 0x" << std::hex << first_wrong << " ("
                      << float_of(first_wrong) << ")";
}

TEST(RoundingSteps, PassARoundedResultAndRefuseATruncatedOne) {
  torch::manual_seed(6);
  const auto ref = torch::randn({4096}, torch::kDouble) * at::exp2(torch::randint(-20, 20, {4096}).to(at::kDouble));
  const auto rounded = ref.to(at::kFloat).to(at::kBFloat16);
  // Truncation: the float's low 16 bits dropped (toward zero).
  const auto truncated =
      at::bitwise_and(ref.to(at::kFloat).view(at::kInt), int32_t(0xffff0000u)).view(at::kFloat).to(at::kBFloat16);
  const double floor = 0.0;
  EXPECT_TRUE(ember::testing::within_rounding_steps(rounded, ref, ember::testing::kOneRounding, floor).ok);
  const auto check = ember::testing::within_rounding_steps(truncated, ref, ember::testing::kOneRounding, floor);
  EXPECT_FALSE(check.ok);
  EXPECT_GT(check.outside, 1000) << check.worst;  // about half the elements are off by over half a step
  // Relative to the largest value, as the kernels' tests compared before, truncation passes.
  const double relative = (truncated.to(at::kDouble) - ref).abs().max().item<double>() / ref.abs().max().item<double>();
  EXPECT_LT(relative, 1.0 / 128);
  // A step at the edges: 1.0 in bf16 is 2^-7, a subnormal's the smallest one.
  const auto steps =
      ember::testing::rounding_step(torch::tensor({1.0, 1.5, -3.0, 0.0, 1e-40}, torch::kDouble), at::kBFloat16);
  EXPECT_TRUE(at::equal(steps, torch::tensor({0x1p-7, 0x1p-7, 0x1p-6, 0x1p-133, 0x1p-133}, torch::kDouble))) << steps;
}

}  // namespace
}  // namespace element_math
