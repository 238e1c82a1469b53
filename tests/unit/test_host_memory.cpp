// util/host_memory.h: once retained, a large host tensor comes from the heap (no mmap'd chunk) and
// its memory stays in the process after it is freed, ready for the next step's tensors (whether glibc
// reuses that very block is its own business: the test does not ask).
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <malloc.h>

#include "ember/util/host_memory.h"

namespace {

constexpr int64_t kFloats = 64 << 20;  // 256 MB: far above glibc's largest mmap threshold (32 MB)

TEST(HostMemory, LargeTensorsAreServedFromTheHeapAndKept) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer's allocator replaces glibc's malloc, whose settings this test checks";
#endif
  ASSERT_TRUE(ember::retain_freed_host_memory());
  const auto before = mallinfo2();
  {
    auto t = at::ones({kFloats});
    const auto during = mallinfo2();
    EXPECT_EQ(during.hblks, before.hblks) << "the tensor was mmap'd";
    EXPECT_GE(during.uordblks, before.uordblks + kFloats * 4);
  }
  const auto after = mallinfo2();
  EXPECT_GE(after.fordblks, kFloats * 4) << "the freed tensor was given back to the system";
}

}  // namespace
