// `infertune sweep` refuses a dimension list element out of range as bench does: exit status 1 and a
// message naming the flag and the value, before any model is opened (the model named does not exist) and
// before anything is written (--dry-run, a private results store).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <filesystem>

#include "test_support.h"

namespace infertune {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kMissingModel = "/nonexistent/never-loaded.gguf";

TEST(SweepFlagRanges, ListElementsOutOfRangeAreRefused) {
  const auto dir = test::temp_dir();
  const std::pair<const char*, const char*> cases[] = {
      // The settings' ranges are the settings table's (engine/settings/settings_table.cpp), as bench's and
      // run's: -1 and 0 both mean "as many threads as physical cores".
      {"-t 0,-3", "-t: -3 is out of range; allowed: -1 (auto), 0 (auto) or 1..1024"},
      {"-p -5", "-p: -5 is out of range; allowed: >= 0"},
      {"-n 8,-1", "-n: -1 is out of range; allowed: >= 0"},
      {"-b 0", "-b: 0 is out of range; allowed: 1..16777216"},
      {"-t 5000", "-t: 5000 is out of range; allowed: -1 (auto), 0 (auto) or 1..1024"},
      // llama.cpp's multi-letter flags reach the sweep (its own aliases) and are named as given.
      {"-ngl -2", "-ngl: -2 is out of range; allowed: -1..100000"},
      {"-ub 1,0", "-ub: 0 is out of range; allowed: 1..16777216"},
      {"-np 300", "-np: 300 is out of range; allowed: 1..256"},
      {"-ctk q9", "-ctk: 'q9' is not a KV cache type"},
  };
  for (const auto& [flags, message] : cases) {
    const auto result =
        test::run_command(fmt::format("cd {} && {} sweep --dry-run --db {} -m {} {}", dir.string(),
                                      test::infertune_binary(), (dir / "r.db").string(), kMissingModel, flags));
    EXPECT_EQ(result.exit_code, 1) << flags << "\n" << result.output;
    EXPECT_THAT(result.output, HasSubstr(message)) << flags;
    EXPECT_THAT(result.output, Not(HasSubstr(kMissingModel))) << flags << ": the model was opened first";
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "r.db"));
}

}  // namespace
}  // namespace infertune
