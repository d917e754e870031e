// `infertune run` refuses out-of-range flag values end to end: exit status 1, a message naming the flag, the
// value and the allowed range, and before the model is loaded (the cases name a model file that does not
// exist, so an error about the file would mean the flag got through). The documented special values
// (-n -1, --top-k 0, -t -1 and 0, -C 0x0, -fa true, -ngl 0) still run.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "engine/settings/setting_flags.h"
#include "test_support.h"

namespace infertune {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kMissingModel = "/nonexistent/never-loaded.gguf";

test::CommandResult run(const std::string& args) {
  return test::run_command(fmt::format("{} run {}", test::infertune_binary(), args));
}

std::string model_path() { return test::fixture_path("models/stories260K.gguf").string(); }

struct BadFlag {
  std::string flags;
  std::string names;  // the flag as the message names it
  std::string says;   // the value and the range
};

void expect_refused(const BadFlag& c) {
  const auto result = run(fmt::format("-m {} --prompt-tokens 1,2 {}", kMissingModel, c.flags));
  EXPECT_EQ(result.exit_code, 1) << c.flags << "\n" << result.output;
  EXPECT_THAT(result.output, HasSubstr(c.names)) << c.flags;
  EXPECT_THAT(result.output, HasSubstr(c.says)) << c.flags;
  EXPECT_THAT(result.output, Not(HasSubstr(kMissingModel))) << c.flags << ": the model was opened first";
}

TEST(RunFlagRanges, OutOfRangeValuesAreRefusedBeforeTheModelIsLoaded) {
  const std::vector<BadFlag> cases = {
      {"-t -5", "--threads", "-5 is out of range; allowed: -1 (auto), 0 (auto) or 1..1024"},
      {"-tb -2", "--threads-batch", "-2 is out of range; allowed: -1 (auto), 0 (auto) or 1..1024"},
      {"-n -2", "--n-predict", "-2 is out of range; allowed: -1 (until end of generation) or >= 0"},
      {"--top-k -5", "--top-k", "-5 is out of range; allowed: >= 0 (0 = off)"},
      {"--top-p 1.5", "--top-p", "1.5 is out of range; allowed: (0, 1]"},
      {"--top-p 0", "--top-p", "0 is out of range; allowed: (0, 1]"},
      {"--min-p -0.1", "--min-p", "-0.1 is out of range; allowed: [0, 1]"},
      {"--repeat-penalty -1", "--repeat-penalty", "-1 is out of range; allowed: > 0"},
      {"--repeat-last-n -2", "--repeat-last-n", "-2 is out of range; allowed: -1 (the whole history) or >= 0"},
      {"--temp nan", "--temp", "nan is out of range; allowed: any finite number"},
      {"-c -5", "--ctx-size", "-5 is out of range; allowed: 0..16777216"},
      {"-b 0", "--batch-size", "0 is out of range; allowed: 1..16777216"},
      {"-ub -3", "--ubatch-size", "-3 is out of range; allowed: 1..16777216"},
      {"-ctk q9_9", "--cache-type-k", "'q9_9' is not a KV cache type; allowed: f32, f16, bf16, q8_0, q4_0"},
      {"-fa maybe", "--flash-attn", "'maybe' is not on, off or auto"},
      {"-ngl -2", "--n-gpu-layers", "-2 is out of range; allowed: -1..100000"},
      {"--prio 4", "--prio", "4 is out of range; allowed: 0..3"},
      {"--poll 101", "--poll", "101 is out of range; allowed: 0..100"},
  };
  for (const BadFlag& c : cases) expect_refused(c);
}

TEST(RunFlagRanges, ACpuMaskBeyondTheMachineIsRefusedNamingTheMissingCpus) {
  auto machine = this_machine_cpus();
  ASSERT_TRUE(machine) << machine.error().message;
  const unsigned last = machine->cpus().back();
  // One CPU past the last one this process may use, with the ones it has.
  expect_refused({fmt::format("-C 0-{}", last + 1), "--cpu-mask", fmt::format("CPUs {} are not on", last + 1)});
  // Only CPUs that do not exist.
  expect_refused({"-C 65000-65535", "--cpu-mask", "CPUs 65000-65535 are not on this machine"});
  if (last < 31) {
    expect_refused({"-C 0xffffffff", "--cpu-mask", fmt::format("CPUs {}-31 are not on this machine", last + 1)});
  }
}

TEST(RunFlagRanges, DocumentedSpecialValuesStillRun) {
  // -n -1 runs until end of generation or a full context; -c 16 keeps that short.
  for (const std::string flags : {"-n -1 -c 16", "-n 2 --top-k 0", "-n 2 -t -1 -tb -1 --repeat-last-n -1 --temp -1",
                                  "-n 2 -t 0 -tb 0 -C 0x0 -fa true -ngl 0"}) {
    const auto result = run(fmt::format("-m {} --prompt-tokens 1,2 --print-ids --seed 1 {}", model_path(), flags));
    EXPECT_EQ(result.exit_code, 0) << flags << "\n" << result.output;
    EXPECT_THAT(result.output, HasSubstr("generated")) << flags;
  }
}

}  // namespace
}  // namespace infertune
