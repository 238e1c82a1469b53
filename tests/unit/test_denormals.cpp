// util/denormals.h: after flush_denormals_on_all_threads, denormal floats are read and written as
// zero by every intra-op thread, not only the caller (LibTorch's own setting covers the caller only).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "ember/util/denormals.h"

TEST(Denormals, FlushedOnEveryIntraOpThread) {
  at::set_num_threads(2);
  const float tiny = 1e-39f;  // below fp32's smallest normal, 1.18e-38
  auto x = torch::full({1 << 20}, tiny);  // large enough for the multiply to split over the threads
  ASSERT_GT(x.mul(1.0f).min().item<float>(), 0.0f) << "denormals already flushed before the call";
  if (!ember::flush_denormals_on_all_threads()) GTEST_SKIP() << "this CPU cannot flush denormals";
  auto y = x.mul(1.0f);  // denormals-are-zero: every element, whichever thread computed it
  EXPECT_EQ(y.max().item<float>(), 0.0f);
  EXPECT_EQ(torch::full({1 << 20}, 1e-20f).mul(1e-20f).max().item<float>(), 0.0f);  // flush-to-zero
  EXPECT_EQ(torch::full({4}, 1e-20f).mul(2.0f).min().item<float>(), 2e-20f);  // normal numbers untouched
  ember::flush_denormals_on_all_threads(false);  // the other tests of this process expect IEEE denormals
  EXPECT_GT(x.mul(1.0f).min().item<float>(), 0.0f);
}
