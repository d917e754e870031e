// `infertune bench` and `batched-bench` refuse a list element out of range the way `run` refuses a single
// value: exit status 1, a message naming the flag, the value and the range, before any model is opened (the
// model named does not exist, so an error about it would mean the flags got through). Also the bounded
// list parser itself, and -C masks against the machine.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "bench/llama_bench/bench_flags.h"
#include "engine/settings/value_lists.h"
#include "test_support.h"

namespace infertune {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kMissingModel = "/nonexistent/never-loaded.gguf";

struct BadList {
  std::string command;
  std::string flags;
  std::string says;  // flag, value and range
};

void expect_refused(const BadList& c) {
  const auto result = test::run_command(
      fmt::format("({} {} -m {} {} > /dev/null)", test::infertune_binary(), c.command, kMissingModel, c.flags));
  EXPECT_EQ(result.exit_code, 1) << c.command << " " << c.flags << "\n" << result.output;
  EXPECT_THAT(result.output, HasSubstr(c.says)) << c.command << " " << c.flags;
  EXPECT_THAT(result.output, Not(HasSubstr(kMissingModel))) << c.flags << ": the model was opened first";
}

TEST(BenchFlagRanges, ListElementsOutOfRangeAreRefused) {
  const std::vector<BadList> cases = {
      {"bench", "-t 0,-3", "-t: -3 is out of range; allowed: -1 (auto), 0 (auto) or 1..1024"},
      {"bench", "-t 1-4,2000", "-t: 2000 is out of range; allowed: -1 (auto), 0 (auto) or 1..1024"},
      {"bench", "-p -5", "-p: -5 is out of range; allowed: 0..16777216 (0 = no pp test)"},
      {"bench", "-n 16,-1", "-n: -1 is out of range; allowed: 0..16777216 (0 = no tg test)"},
      {"bench", "-b 0-8*2", "-b: the range '0-8*2' never advances"},
      {"bench", "-b 512,0", "-b: 0 is out of range; allowed: 1..16777216"},
      {"bench", "-ub -1", "-ub: -1 is out of range; allowed: 1..16777216"},
      {"bench", "-ngl -2", "-ngl: -2 is out of range; allowed: -1..100000"},
      {"bench", "--poll 50,101", "--poll: 101 is out of range; allowed: 0..100"},
      {"bench", "-C 0x1,65000-65535", "-C: '65000-65535': CPUs 65000-65535 are not on this machine"},
      {"bench", "-r 0", "--repetitions: 0 is out of range; allowed: 1..100000"},
      {"bench", "-nkvo 0,2", "-nkvo: '2' is not 0 or 1"},
      {"bench", "-lm mlock", "-lm: 'mlock' is not supported (auto or mmap: map the file; none: read it into memory)"},
      {"bench", "-lm none -mmp 1", "-lm and -mmp: give one of them"},
      {"bench", "-oe xml", "-oe: unknown format 'xml' (md, csv, json, jsonl, sql)"},
      {"batched-bench", "-npl 1,0", "-npl: 0 is out of range; allowed: 1..256"},
      {"batched-bench", "-npp -128", "-npp: -128 is out of range; allowed: 1..16777216"},
      {"batched-bench", "-ntg -1", "-ntg: -1 is out of range; allowed: 0..16777216"},
      {"batched-bench", "-c -1", "--ctx-size: -1 is out of range"},
      {"batched-bench", "-t -3", "--threads: -3 is out of range"},
      {"batched-bench", "-C 65000-65535", "CPUs 65000-65535 are not on this machine"},
  };
  for (const BadList& c : cases) expect_refused(c);
}

TEST(BenchFlagRanges, AModelIsRequiredExceptToListDevices) {
  const auto result = test::run_command(fmt::format("({} bench -p 8 > /dev/null)", test::infertune_binary()));
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_THAT(result.output, HasSubstr("-m: no model given"));
  EXPECT_EQ(test::run_command(test::infertune_binary() + " bench --list-devices").exit_code, 0);
}

TEST(BenchFlagRanges, BoundedListParserChecksEveryValue) {
  const IntRange threads{.low = 0, .high = 8};
  auto ok = parse_int_list({"0,2-8+2", "1"}, "-t", threads);
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(*ok, std::vector<int>({0, 2, 4, 6, 8, 1}));
  auto negative = parse_int_list({"1,-3"}, "-t", threads);
  ASSERT_FALSE(negative);
  EXPECT_EQ(negative.error().message, "-t: -3 is out of range; allowed: 0..8");
  auto above = parse_int_list({"4-16*2"}, "-t", threads);
  ASSERT_FALSE(above);
  EXPECT_EQ(above.error().message, "-t: 16 is out of range; allowed: 0..8");
  auto special = parse_int_list({"-1,3"}, "-ngl", IntRange{.low = 0, .high = 10, .special = {{-1, "all"}}});
  ASSERT_TRUE(special) << special.error().message;
  EXPECT_EQ(*special, std::vector<int>({-1, 3}));
}

TEST(BenchFlagRanges, UnboundedListParserNamesTheLowerBound) {
  auto negative = parse_int_list({"-5"}, "-p");
  ASSERT_FALSE(negative);
  EXPECT_EQ(negative.error().message, "-p: -5 is out of range; allowed: >= 0");
}

TEST(BenchFlagRanges, CpuMasksAreCheckedAgainstTheMachineGiven) {
  BenchFlagText text;
  text.models = {"x.gguf"};
  text.settings.occurrences["cpu_mask"] = {"0x0,0x3,2-3"};
  const MachineCpus four = [] { return Result<CpuSet>(CpuSet::range(0, 3)); };
  const MachineCpus two = [] { return Result<CpuSet>(CpuSet::range(0, 1)); };
  auto fits = resolve_bench_params(text, four);
  ASSERT_TRUE(fits) << fits.error().message;
  EXPECT_EQ(fits->values("cpu_mask"), std::vector<std::string>({"0x0", "0x3", "2-3"}));
  auto refused = resolve_bench_params(text, two);
  ASSERT_FALSE(refused);
  EXPECT_THAT(refused.error().message, HasSubstr("-C: '2-3': CPUs 2-3 are not on this machine"));
}

// llama-bench's -nkvo (inverse of --kv-offload) and -lm (its load modes, for -mmp), so its command lines run.
TEST(BenchFlagRanges, LlamaBenchNoKvOffloadAndLoadModeListsBecomeSettings) {
  BenchFlagText text;
  text.models = {"x.gguf"};
  text.no_kv_offload = {"0,1"};
  text.load_mode = {"auto,none", "mmap"};
  auto params = resolve_bench_params(text);
  ASSERT_TRUE(params) << params.error().message;
  EXPECT_EQ(params->values("kv_offload"), std::vector<std::string>({"1", "0"}));
  EXPECT_EQ(params->values("mmap"), std::vector<std::string>({"1", "0", "1"}));
}

}  // namespace
}  // namespace infertune
