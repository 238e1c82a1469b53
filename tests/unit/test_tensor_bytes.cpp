// tensor_bytes: the size check every reader of outside tensors makes before allocating.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "ember/io/tensor_bytes.h"

TEST(TensorBytes, CountsBytesAndRefusesWhatLibTorchCouldNotStride) {
  EXPECT_EQ(ember::tensor_bytes({2, 3}, 4), 24u);
  EXPECT_EQ(ember::tensor_bytes({}, 8), 8u);          // a scalar
  EXPECT_EQ(ember::tensor_bytes({0, 1000}, 4), 0u);   // empty
  EXPECT_EQ(ember::tensor_bytes({-1, 4}, 4), std::nullopt);
  const int64_t big = int64_t{1} << 40;
  EXPECT_EQ(ember::tensor_bytes({big, big}, 1), std::nullopt);      // 2^80 bytes
  EXPECT_EQ(ember::tensor_bytes({0, big, big}, 1), std::nullopt);   // 0 bytes, strides of 2^80
  EXPECT_EQ(ember::tensor_bytes({int64_t{1} << 61}, 4), std::nullopt);  // 2^63 bytes
  EXPECT_EQ(ember::tensor_bytes({int64_t{1} << 60}, 4), size_t{1} << 62);
}
