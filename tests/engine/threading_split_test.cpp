// split_range, the static split matmul uses: for every (n_items, n_parts, granule) the ranges are in order,
// contiguous, disjoint, cover [0, n_items), differ in size by at most one granule, and start on granule
// boundaries. Checked exhaustively over small sizes against these properties.
#include "engine/threading/static_split.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace infertune {
namespace {

TEST(ThreadingSplit, ContiguousDisjointBalancedCover) {
  for (size_t granule : {size_t{1}, size_t{3}, size_t{32}}) {
    for (size_t n = 0; n <= 300; ++n) {
      for (size_t parts = 1; parts <= 17; ++parts) {
        size_t expected_begin = 0, smallest = SIZE_MAX, largest = 0;
        for (size_t p = 0; p < parts; ++p) {
          const IndexRange r = split_range(n, parts, p, granule);
          ASSERT_EQ(r.begin, expected_begin) << n << "/" << parts << "/" << granule << " part " << p;
          ASSERT_LE(r.begin, r.end);
          ASSERT_TRUE(r.begin % granule == 0 || r.begin == n);
          expected_begin = r.end;
          // Compare in granules: only the last non-empty range may be cut short by n.
          const size_t granules = (r.size() + granule - 1) / granule;
          smallest = std::min(smallest, granules);
          largest = std::max(largest, granules);
        }
        ASSERT_EQ(expected_begin, n) << n << "/" << parts << "/" << granule;
        ASSERT_LE(largest - smallest, 1u) << n << "/" << parts << "/" << granule;
      }
    }
  }
}

TEST(ThreadingSplit, ExamplesAndEdges) {
  EXPECT_EQ(split_range(10, 3, 0), (IndexRange{0, 4}));
  EXPECT_EQ(split_range(10, 3, 1), (IndexRange{4, 7}));
  EXPECT_EQ(split_range(10, 3, 2), (IndexRange{7, 10}));
  EXPECT_EQ(split_range(2, 4, 3), (IndexRange{2, 2}));           // more parts than items: empty tails
  EXPECT_EQ(split_range(5, 2, 5), (IndexRange{5, 5}));           // part out of range: empty
  EXPECT_EQ(split_range(5, 0, 0), (IndexRange{5, 5}));           // no parts: empty
  EXPECT_EQ(split_range(100, 3, 2, 32), (IndexRange{96, 100}));  // 4 blocks of 32: 2, 1, 1 (cut at 100)
  const size_t huge = std::numeric_limits<size_t>::max() / 2;
  EXPECT_EQ(split_range(huge, 7, 6).end, huge);
  EXPECT_EQ(split_range(huge, 7, 0).begin, 0u);
}

}  // namespace
}  // namespace infertune
