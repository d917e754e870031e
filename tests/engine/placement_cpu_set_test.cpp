// -C/--cpu-mask parsing: llama.cpp's hex masks (bit i = CPU i, rightmost digit = CPUs 0-3, any length)
// and range lists; errors name the flag. CpuSet's set algebra and its "0-3,8" spelling.
#include "engine/threading/cpu_set.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace infertune {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<unsigned> parsed(std::string_view text) {
  auto set = parse_cpu_mask(text);
  EXPECT_TRUE(set.ok()) << text << ": " << (set.ok() ? "" : set.error().message);
  return set.ok() ? set->cpus() : std::vector<unsigned>{};
}

TEST(PlacementCpuSet, HexMaskBitIIsCpuI) {
  EXPECT_THAT(parsed("0xF0"), ElementsAre(4, 5, 6, 7));
  EXPECT_THAT(parsed("0X1"), ElementsAre(0));
  EXPECT_THAT(parsed("0x5"), ElementsAre(0, 2));
  EXPECT_THAT(parsed("0xa0"), ElementsAre(5, 7));
  // Without a prefix a bare number is hex too, as llama.cpp reads it: "8" is CPU 3.
  EXPECT_THAT(parsed("8"), ElementsAre(3));
  EXPECT_THAT(parsed("ff"), ElementsAre(0, 1, 2, 3, 4, 5, 6, 7));
}

TEST(PlacementCpuSet, HexMaskOfAnyLength) {
  // 0x1 followed by 16 zero digits: bit 64.
  EXPECT_THAT(parsed("0x10000000000000000"), ElementsAre(64));
  EXPECT_THAT(parsed("0x8000000000000001"), ElementsAre(0, 63));
  EXPECT_THAT(parsed("0x0000"), ElementsAre());
}

TEST(PlacementCpuSet, RangeLists) {
  EXPECT_THAT(parsed("0-3,8"), ElementsAre(0, 1, 2, 3, 8));
  EXPECT_THAT(parsed("8-8"), ElementsAre(8));
  EXPECT_THAT(parsed("10-11,2,2,0-1"), ElementsAre(0, 1, 2, 10, 11));
}

TEST(PlacementCpuSet, BadMasksNameTheFlag) {
  for (const char* text : {"", "0xG", "0x", "zz", "3-1", "1-x", ",", "5,", "1,,2", "-3", "0x1-2"}) {
    auto set = parse_cpu_mask(text);
    ASSERT_FALSE(set.ok()) << "'" << text << "' was accepted";
    EXPECT_THAT(set.error().message, HasSubstr("-C/--cpu-mask")) << text;
  }
  auto huge = parse_cpu_mask("0-70000");
  ASSERT_FALSE(huge.ok());
  EXPECT_THAT(huge.error().message, HasSubstr("above the limit"));
  auto long_hex = parse_cpu_mask("0x1" + std::string(20000, '0'));  // bit 80000
  ASSERT_FALSE(long_hex.ok());
  EXPECT_THAT(long_hex.error().message, HasSubstr("above the limit"));
}

TEST(PlacementCpuSet, SetAlgebraAndSpelling) {
  const CpuSet a({7, 1, 2, 3, 3});
  const CpuSet b = CpuSet::range(2, 5);
  EXPECT_THAT(a.cpus(), ElementsAre(1, 2, 3, 7));
  EXPECT_THAT(a.intersect(b).cpus(), ElementsAre(2, 3));
  EXPECT_THAT(a.unite(b).cpus(), ElementsAre(1, 2, 3, 4, 5, 7));
  EXPECT_THAT(a.minus(b).cpus(), ElementsAre(1, 7));
  EXPECT_EQ(a.to_string(), "1-3,7");
  EXPECT_EQ(CpuSet().to_string(), "none");
  EXPECT_EQ(CpuSet({0, 2, 4, 5}).to_string(), "0,2,4-5");
  EXPECT_TRUE(a.contains(7));
  EXPECT_FALSE(a.contains(4));
}

}  // namespace
}  // namespace infertune
