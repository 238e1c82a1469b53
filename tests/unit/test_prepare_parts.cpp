// Parts of a prepare (data/prepare_parts.h): the N parts cover the document list once, in order,
// each a contiguous run, with about equal bytes; --part is read strictly.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "ember/data/prepare_parts.h"
#include "ember/util/error.h"

namespace {

TEST(PrepareParts, PartsCoverTheListOnceInOrderWithAboutEqualBytes) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<uint64_t> sizes(1 + rng() % 40);
    for (auto& s : sizes) s = rng() % 4 == 0 ? 0 : rng() % 100000;
    const long double total = std::accumulate(sizes.begin(), sizes.end(), 0.0L);
    const uint64_t largest = *std::max_element(sizes.begin(), sizes.end());
    const int count = 1 + static_cast<int>(rng() % 9);
    size_t next = 0;
    for (int i = 1; i <= count; ++i) {
      const auto [begin, end] = ember::part_documents(sizes, {i, count});
      ASSERT_EQ(begin, next) << "part " << i << "/" << count << " does not start where the previous one ended";
      ASSERT_LE(begin, end);
      const long double bytes = std::accumulate(sizes.begin() + begin, sizes.begin() + end, 0.0L);
      if (total > 0) {
        EXPECT_LE(bytes, total / count + largest) << "part " << i << "/" << count;
      }
      next = end;
    }
    EXPECT_EQ(next, sizes.size()) << "the parts do not reach the end of the list";
  }
}

TEST(PrepareParts, EmptyFilesAreSpreadByCount) {
  const std::vector<uint64_t> sizes(6, 0);
  EXPECT_EQ(ember::part_documents(sizes, {1, 3}), (std::pair<size_t, size_t>{0, 2}));
  EXPECT_EQ(ember::part_documents(sizes, {2, 3}), (std::pair<size_t, size_t>{2, 4}));
  EXPECT_EQ(ember::part_documents(sizes, {3, 3}), (std::pair<size_t, size_t>{4, 6}));
  EXPECT_EQ(ember::part_documents({10, 10}, {1, 1}), (std::pair<size_t, size_t>{0, 2}));
}

TEST(PrepareParts, PartIsReadAsIOfN) {
  const auto p = ember::parse_prepare_part("3/8");
  EXPECT_EQ(p.index, 3);
  EXPECT_EQ(p.count, 8);
  EXPECT_TRUE(ember::parse_prepare_part("1/1").whole());
  for (const char* bad : {"0/4", "5/4", "1/0", "3", "a/b", "1/2/3", "-1/2", ""})
    EXPECT_THROW(ember::parse_prepare_part(bad), ember::UsageError) << bad;
}

}  // namespace
