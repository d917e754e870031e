// The range checks of -t, -tb and -C at parse time: -1 and 0 are "auto" (llama.cpp reads both so; llama-bench
// and the sweep wrote 0), other negatives are refused; a -C mask is refused when it names CPUs the machine
// lacks (the message names them); 0x0 is llama.cpp's "no mask".
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/settings/setting_flags.h"
#include "engine/settings/settings_table.h"
#include "engine/threading/topology.h"
#include "placement_flags_parse.h"

namespace infertune {
namespace {

using ::testing::HasSubstr;

// A 2-CPU machine, like the CI hosts.
Result<CpuSet> two_cpus() { return CpuSet::range(0, 1); }

std::string parse(PlacementOptions& options, std::vector<std::string> args, MachineCpus machine = two_cpus) {
  return test::parse_placement_flags(options, std::move(args), std::move(machine));
}

TEST(PlacementFlagRanges, ThreadCountsAreAutoOrPositive) {
  for (const char* flag : {"-t", "-tb"}) {
    for (const char* bad : {"-5", "-2", "1025"}) {
      PlacementOptions options;
      const std::string error = parse(options, {flag, bad});
      EXPECT_THAT(error, HasSubstr(std::string(flag) == "-t" ? "--threads" : "--threads-batch")) << flag << " " << bad;
      EXPECT_THAT(error, HasSubstr(std::string(bad) + " is out of range; allowed: -1 (auto), 0 (auto)")) << error;
      EXPECT_THAT(error, HasSubstr("or 1..1024")) << error;
    }
  }
  PlacementOptions options;
  ASSERT_EQ(parse(options, {"-t", "-1", "-tb", "1024"}), "");
  EXPECT_EQ(options.threads, kAutoThreads);
  EXPECT_EQ(options.threads_batch, 1024);
  ASSERT_EQ(parse(options, {"-t", "0", "-tb", "0"}), "");
  EXPECT_EQ(options.threads, kAutoThreads);
  EXPECT_EQ(options.threads_batch, kAutoThreads);
}

TEST(PlacementFlagRanges, PrioAndPollMessagesNameTheRange) {
  PlacementOptions options;
  EXPECT_THAT(parse(options, {"--prio", "4"}), HasSubstr("--prio: 4 is out of range; allowed: 0..3"));
  EXPECT_THAT(parse(options, {"--poll", "-1"}), HasSubstr("--poll: -1 is out of range; allowed: 0..100"));
}

TEST(PlacementFlagRanges, AMaskWiderThanTheMachineIsRefusedNamingTheMissingCpus) {
  for (const auto& [mask, missing] : std::vector<std::pair<std::string, std::string>>{
           {"0xffffffff", "CPUs 2-31"}, {"0x4", "CPUs 2"}, {"2-3", "CPUs 2-3"}, {"0-1,8", "CPUs 8"}}) {
    PlacementOptions options;
    const std::string error = parse(options, {"-C", mask});
    EXPECT_THAT(error, HasSubstr("--cpu-mask")) << mask;
    EXPECT_THAT(error, HasSubstr("'" + mask + "'")) << error;
    EXPECT_THAT(error, HasSubstr(missing + " are not on this machine")) << error;
    EXPECT_THAT(error, HasSubstr("it may use CPUs 0-1")) << error;
  }
  PlacementOptions none;
  EXPECT_EQ(parse(none, {"-C", "0x0"}), "");
  EXPECT_EQ(none.cpu_mask, "");
  PlacementOptions empty;
  EXPECT_THAT(parse(empty, {"-C", "0x00"}), HasSubstr("selects no CPUs"));
  PlacementOptions fits;
  EXPECT_EQ(parse(fits, {"-C", "0x3"}), "");
  EXPECT_EQ(parse(fits, {"-C", "1-1"}), "");
  EXPECT_EQ(fits.cpu_mask, "1-1");
}

TEST(PlacementFlagRanges, TheMachineIsAskedOnlyWhenAMaskIsGiven) {
  int asked = 0;
  const MachineCpus counting = [&asked] {
    ++asked;
    return Result<CpuSet>(CpuSet::range(0, 3));
  };
  PlacementOptions options;
  ASSERT_EQ(parse(options, {"-t", "2"}, counting), "");
  EXPECT_EQ(asked, 0);
  ASSERT_EQ(parse(options, {"-C", "0xF"}, counting), "");
  EXPECT_EQ(asked, 1);
}

TEST(PlacementFlagRanges, TheLiveMachineIsWhatTopologySees) {
  auto cpus = this_machine_cpus();
  ASSERT_TRUE(cpus) << cpus.error().message;
  auto topology = Topology::load_machine();
  ASSERT_TRUE(topology) << topology.error().message;
  EXPECT_EQ(*cpus, topology->all_cpus());
  const unsigned beyond = cpus->cpus().back() + 1;
  const auto fits = find_setting("cpu_mask")->check_on_machine;
  const Status refused = fits(fmt::format("0-{}", beyond), *cpus);
  ASSERT_FALSE(refused);
  EXPECT_THAT(refused.error().message, HasSubstr(fmt::format("CPUs {} are not on this machine", beyond)));
  EXPECT_TRUE(fits(fmt::format("{0}-{0}", cpus->cpus().front()), *cpus));
}

}  // namespace
}  // namespace infertune
