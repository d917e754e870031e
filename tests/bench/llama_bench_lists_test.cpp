// bench's list syntax (llama-bench's): comma lists, repeated flags, and the ranges first-last,
// first-last+step, first-last*mult; the errors name the flag.
#include <gtest/gtest.h>

#include "engine/settings/value_lists.h"

namespace infertune {
namespace {

std::vector<int> ints(std::vector<std::string> occurrences, bool allow_negative = false) {
  auto values = parse_int_list(occurrences, "-p", allow_negative);
  EXPECT_TRUE(values) << values.error().message;
  return values ? *values : std::vector<int>{};
}

std::string int_error(std::vector<std::string> occurrences, bool allow_negative = false) {
  auto values = parse_int_list(occurrences, "-p", allow_negative);
  return values ? std::string("(accepted)") : values.error().message;
}

TEST(BenchLists, CommaListsAndRepeatedFlagsAddUpInOrder) {
  EXPECT_EQ(ints({"512"}), std::vector<int>({512}));
  EXPECT_EQ(ints({"16,32,8"}), std::vector<int>({16, 32, 8}));
  EXPECT_EQ(ints({"16", "32,64"}), std::vector<int>({16, 32, 64}));
  EXPECT_EQ(ints({"0"}), std::vector<int>({0}));
}

TEST(BenchLists, RangesExpandInPlace) {
  EXPECT_EQ(ints({"1-4"}), std::vector<int>({1, 2, 3, 4}));
  EXPECT_EQ(ints({"1-8+1"}), std::vector<int>({1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(ints({"2-9+3"}), std::vector<int>({2, 5, 8}));  // stops at the last value <= 9
  EXPECT_EQ(ints({"128-1024*2"}), std::vector<int>({128, 256, 512, 1024}));
  EXPECT_EQ(ints({"3-100*3"}), std::vector<int>({3, 9, 27, 81}));
  EXPECT_EQ(ints({"5-5"}), std::vector<int>({5}));
  EXPECT_EQ(ints({"16,128-512*2,7"}), std::vector<int>({16, 128, 256, 512, 7}));
}

TEST(BenchLists, NegativeValuesOnlyWhereAllowed) {
  EXPECT_EQ(ints({"-1,0,5"}, true), std::vector<int>({-1, 0, 5}));
  EXPECT_EQ(ints({"-2-1"}, true), std::vector<int>({-2, -1, 0, 1}));
  EXPECT_EQ(int_error({"-1"}), "-p: -1 is out of range; allowed: >= 0");
}

TEST(BenchLists, MalformedItemsAreErrorsNamingTheFlag) {
  for (const char* bad : {"", "1,,2", "1,", ",1", "x", "1-", "1-x", "1-8+", "1-8/2", "1-8+2x", "1.5", "99999999999",
                          "8-1", "1-8+0", "1-8*1", "0-8*2"}) {
    const std::string error = int_error({bad});
    EXPECT_EQ(error.rfind("-p: ", 0), 0u) << "'" << bad << "' gave: " << error;
  }
  EXPECT_NE(int_error({"8-1"}).find("empty"), std::string::npos);
  EXPECT_NE(int_error({"1-8*1"}).find("never advances"), std::string::npos);
}

TEST(BenchLists, AHugeRangeIsAnErrorNotAHang) {
  const std::string error = int_error({"1-100000000"});
  EXPECT_NE(error.find("more than"), std::string::npos) << error;
  EXPECT_EQ(ints({"1-4096"}).size(), kMaxRangeValues);
}

TEST(BenchLists, TheCapIsOnTheWholeListNotEachRange) {
  for (const std::vector<std::string>& piled : {std::vector<std::string>{"1-4096,1"},
                                                std::vector<std::string>{"1-4096", "1-4096"}}) {
    const std::string error = int_error(piled);
    EXPECT_NE(error.find("in all"), std::string::npos) << error;
  }
  EXPECT_EQ(ints({"1-2048", "1-2048"}).size(), kMaxRangeValues);
}

TEST(BenchLists, PairsBoolsAndWords) {
  auto pairs = parse_pair_list({"512,128", "0,16"}, "-pg");
  ASSERT_TRUE(pairs) << pairs.error().message;
  EXPECT_EQ(*pairs, (std::vector<std::pair<int, int>>{{512, 128}, {0, 16}}));
  for (const char* bad : {"512", "512,128,1", "a,b", "-1,2", "1,2x"}) {
    auto rejected = parse_pair_list({bad}, "-pg");
    ASSERT_FALSE(rejected) << bad;
    EXPECT_EQ(rejected.error().message.rfind("-pg: ", 0), 0u) << rejected.error().message;
  }

  auto bools = parse_bool_list({"0,1", "true"}, "-mmp");
  ASSERT_TRUE(bools);
  EXPECT_EQ(*bools, std::vector<bool>({false, true, true}));
  EXPECT_FALSE(parse_bool_list({"2"}, "-mmp"));

  auto words = parse_word_list({"a.gguf,b.gguf", "c.gguf"}, "-m");
  ASSERT_TRUE(words);
  EXPECT_EQ(*words, std::vector<std::string>({"a.gguf", "b.gguf", "c.gguf"}));
}

}  // namespace
}  // namespace infertune
