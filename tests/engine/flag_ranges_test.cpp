// The shared range checks of numeric flags (engine/cli/flag_ranges.h): what each range allows, how it is
// described, and that a CLI11 option refuses a value outside it with a message naming the flag, the value
// and the range -- while every value inside it, special values included, parses to itself.
#include "engine/cli/flag_ranges.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace infertune {
namespace {

using ::testing::HasSubstr;

// Parses `--value TEXT` into an int option with `range`; "" when accepted, else CLI11's message.
std::string parse_int(const IntRange& range, const std::string& text, long long* parsed = nullptr) {
  CLI::App app("test");
  long long value = 12345;
  app.add_option("-v,--value", value)->transform(int_flag_range(range));
  try {
    app.parse(std::vector<std::string>{text, "--value"});  // CLI11 takes the arguments reversed
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  if (parsed) *parsed = value;
  return "";
}

std::string parse_real(const RealRange& range, const std::string& text) {
  CLI::App app("test");
  double value = 0;
  app.add_option("--value", value)->check(real_flag_range(range));
  try {
    app.parse(std::vector<std::string>{text, "--value"});
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  return "";
}

TEST(FlagRanges, IntRangeAllowsItsBoundsAndSpecialValuesOnly) {
  const IntRange threads{.low = 1, .high = 1024, .special = {{-1, "auto"}}};
  for (long long v : {-1LL, 1LL, 2LL, 1024LL}) EXPECT_TRUE(threads.allows(v)) << v;
  for (long long v : {-2LL, 0LL, 1025LL}) EXPECT_FALSE(threads.allows(v)) << v;
  EXPECT_EQ(threads.describe(), "-1 (auto) or 1..1024");
  EXPECT_EQ((IntRange{.low = 0, .note = "0 = off"}.describe()), ">= 0 (0 = off)");
  EXPECT_EQ((IntRange{.low = 3, .high = 3}.describe()), "3");
}

TEST(FlagRanges, RealRangeHonoursOpenEndsAndRefusesNonFinite) {
  const RealRange top_p{.low = 0, .high = 1, .low_open = true};
  EXPECT_FALSE(top_p.allows(0));
  EXPECT_TRUE(top_p.allows(1e-9));
  EXPECT_TRUE(top_p.allows(1));
  EXPECT_FALSE(top_p.allows(1.5));
  EXPECT_EQ(top_p.describe(), "(0, 1]");
  EXPECT_EQ((RealRange{.low = 0, .low_open = true}.describe()), "> 0");
  const RealRange any{};
  EXPECT_TRUE(any.allows(-3.5));
  EXPECT_FALSE(any.allows(std::numeric_limits<double>::quiet_NaN()));
  EXPECT_FALSE(any.allows(std::numeric_limits<double>::infinity()));
  EXPECT_EQ(any.describe(), "any finite number");
}

TEST(FlagRanges, OutOfRangeMessageNamesFlagValueAndRange) {
  EXPECT_EQ(out_of_range_message("-3", "0..1024", "-t"), "-t: -3 is out of range; allowed: 0..1024");
  EXPECT_EQ(out_of_range_message("7", "1..2"), "7 is out of range; allowed: 1..2");
}

TEST(FlagRanges, IntOptionRefusesOutOfRangeNamingFlagValueAndRange) {
  const IntRange range{.low = 0, .special = {{-1, "until end of generation"}}};
  const std::string error = parse_int(range, "-2");
  EXPECT_THAT(error, HasSubstr("--value"));
  EXPECT_THAT(error, HasSubstr("-2 is out of range"));
  EXPECT_THAT(error, HasSubstr("-1 (until end of generation) or >= 0"));
  EXPECT_THAT(parse_int(range, "many"), HasSubstr("'many' is not a whole number"));
  EXPECT_THAT(parse_int(range, "1.5"), HasSubstr("not a whole number"));
  EXPECT_THAT(parse_int(range, "99999999999999999999999"), HasSubstr("99999999999999999999999 is out of range"));
}

TEST(FlagRanges, IntOptionKeepsEveryAllowedValueAsWritten) {
  const IntRange range{.low = 0, .high = 100, .special = {{-1, "all"}}};
  for (const auto& [text, expected] :
       std::vector<std::pair<std::string, long long>>{{"-1", -1}, {"0", 0}, {"100", 100}, {"+7", 7}, {"010", 10}}) {
    long long value = 0;
    EXPECT_EQ(parse_int(range, text, &value), "") << text;
    EXPECT_EQ(value, expected) << text << ": CLI11 alone reads 010 as octal 8";
  }
  EXPECT_THAT(parse_int(range, "0x10"), HasSubstr("not a whole number"));
}

TEST(FlagRanges, RealOptionRefusesOutOfRangeAndNonNumbers) {
  const RealRange unit{.low = 0, .high = 1};
  EXPECT_EQ(parse_real(unit, "0"), "");
  EXPECT_EQ(parse_real(unit, "0.25"), "");
  EXPECT_EQ(parse_real(unit, "1"), "");
  EXPECT_THAT(parse_real(unit, "1.5"), HasSubstr("--value: 1.5 is out of range; allowed: [0, 1]"));
  EXPECT_THAT(parse_real(unit, "-0.1"), HasSubstr("-0.1 is out of range"));
  EXPECT_THAT(parse_real(unit, "nan"), HasSubstr("nan is out of range"));
  EXPECT_THAT(parse_real(RealRange{}, "inf"), HasSubstr("allowed: any finite number"));
  EXPECT_THAT(parse_real(unit, "x"), HasSubstr("'x' is not a number"));
}

}  // namespace
}  // namespace infertune
