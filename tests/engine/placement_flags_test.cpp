// The placement settings of `run` (engine/settings): llama.cpp's names parse into PlacementOptions, absent flags keep
// llama.cpp's defaults, -tb arrives through the alias rewrite, and bad values are refused naming the flag.
#include "engine/settings/setting_flags.h"
#include "engine/settings/settings_table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "placement_flags_parse.h"

namespace infertune {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// -C is checked against a fixed 256-CPU machine, so the masks below mean the same on any test host.
std::string parse(PlacementOptions& options, std::vector<std::string> args) {
  return test::parse_placement_flags(options, std::move(args), [] { return Result<CpuSet>(CpuSet::range(0, 255)); });
}

TEST(PlacementFlags, ParsesLlamaCppNames) {
  PlacementOptions options;
  ASSERT_EQ(parse(options, {"-t", "4", "-tb", "8", "-C", "0xF0", "--cpu-strict", "1", "--numa", "distribute", "--prio",
                            "2", "--poll", "0"}),
            "");
  EXPECT_EQ(options.threads, 4);
  EXPECT_EQ(options.threads_batch, 8);
  EXPECT_EQ(options.cpu_mask, "0xF0");
  EXPECT_TRUE(options.cpu_strict);
  EXPECT_EQ(options.numa, NumaMode::distribute);
  EXPECT_EQ(options.priority, 2);
  EXPECT_EQ(options.poll, 0);
  PlacementOptions long_names;
  ASSERT_EQ(parse(long_names, {"--threads", "3", "--threads-batch=5", "--cpu-mask", "0-3,8", "--numa", "numactl"}), "");
  EXPECT_EQ(long_names.threads, 3);
  EXPECT_EQ(long_names.threads_batch, 5);
  EXPECT_EQ(long_names.cpu_mask, "0-3,8");
  EXPECT_EQ(long_names.numa, NumaMode::numactl);
  PlacementOptions equals;
  ASSERT_EQ(parse(equals, {"-tb=7", "--numa=isolate"}), "");
  EXPECT_EQ(equals.threads_batch, 7);
  EXPECT_EQ(equals.numa, NumaMode::isolate);
}

TEST(PlacementFlags, AbsentFlagsKeepLlamaCppDefaults) {
  PlacementOptions options;
  ASSERT_EQ(parse(options, {}), "");
  EXPECT_EQ(options.threads, kAutoThreads);        // -> physical cores, in plan_placement
  EXPECT_EQ(options.threads_batch, kAutoThreads);  // -> same as -t
  EXPECT_EQ(options.cpu_mask, "");
  EXPECT_FALSE(options.cpu_strict);
  EXPECT_EQ(options.numa, NumaMode::none);
  EXPECT_EQ(options.priority, 0);
  EXPECT_EQ(options.poll, 50);
}

TEST(PlacementFlags, BadValuesNameTheFlag) {
  struct Case {
    std::vector<std::string> args;
    const char* flag;
  };
  for (const Case& c : std::vector<Case>{{{"--numa", "interleave"}, "--numa"},
                                         {{"--prio", "4"}, "--prio"},
                                         {{"--prio", "-1"}, "--prio"},
                                         {{"--poll", "101"}, "--poll"},
                                         {{"-C", "0xZZ"}, "--cpu-mask"},
                                         {{"-C", "3-1"}, "--cpu-mask"},
                                         {{"-t", "many"}, "--threads"},
                                         {{"--cpu-strict", "2"}, "--cpu-strict"}}) {
    PlacementOptions options;
    const std::string error = parse(options, c.args);
    EXPECT_THAT(error, HasSubstr(c.flag)) << c.args[0] << " " << c.args[1];
  }
}

TEST(PlacementFlags, AliasRewriteStopsAtDoubleDashAndLeavesOthersAlone) {
  std::vector<std::string> args{"-t", "2", "-tb", "4", "-tbx", "--", "-tb"};
  rewrite_flag_aliases(args, setting_flag_aliases(Command::run));
  EXPECT_THAT(args, ElementsAre("-t", "2", "--threads-batch", "4", "-tbx", "--", "-tb"));
}

}  // namespace
}  // namespace infertune
