// Another tool's flags in an infertune command, through a table of each kind: a switch taken or refused, a value
// flag taken at the tool's default only or at no value, their short forms rewritten, their help, and parses that
// no longer misread a short form as a one-letter flag with a value.
#include "engine/cli/foreign_flags.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>

namespace infertune {
namespace {

using ::testing::HasSubstr;

const std::array<ForeignFlag, 4> kFlags{
    ForeignFlag{.name = "--batched",
                .aliases = {"-cb"},
                .asks_for = "batching",
                .instead = "always batched",
                .switch_taken = true},
    ForeignFlag{.name = "--special", .aliases = {"-sp", "--specials"}, .asks_for = "special tokens"},
    ForeignFlag{.name = "--moe",
                .aliases = {"-ncmoe"},
                .asks_for = "MoE offload",
                .instead = "dense models only",
                .takes_value = true,
                .taken_values = {"0"}},
    ForeignFlag{.name = "--lora", .asks_for = "LoRA adapters", .takes_value = true},
};
const ForeignFlagTable kTable{.tool = "other-tool", .command = "demo", .group = "other-tool's flags", .flags = kFlags};

// Parses `args` (after the alias rewrite) into a text.
ForeignFlagText parsed(std::vector<std::string> args) {
  CLI::App app;
  ForeignFlagText text;
  add_foreign_flags(app, kTable, text);
  rewrite_flag_aliases(args, foreign_flag_aliases(kTable));
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments last first
  app.parse(args);
  return text;
}

TEST(ForeignFlags, TakenSwitchesAndTheDefaultValuesPass) {
  EXPECT_TRUE(check_foreign_flags(kTable, parsed({"-cb", "-ncmoe", "0", "--moe=0,0"})));
  EXPECT_TRUE(check_foreign_flags(kTable, parsed({})));
}

TEST(ForeignFlags, RefusalsNameTheFlagTheValueAndWhatToUseInstead) {
  EXPECT_EQ(check_foreign_flags(kTable, parsed({"-sp"})).error().message,
            "-sp (--special): infertune demo does not support special tokens");
  EXPECT_EQ(check_foreign_flags(kTable, parsed({"--specials"})).error().message,
            "-sp (--special): infertune demo does not support special tokens");
  EXPECT_EQ(check_foreign_flags(kTable, parsed({"-ncmoe", "0", "-ncmoe", "0,4"})).error().message,
            "-ncmoe (--moe) 4: infertune demo does not support MoE offload (dense models only); only other-tool's "
            "default, 0, is taken");
  EXPECT_EQ(check_foreign_flags(kTable, parsed({"--lora", "a.gguf"})).error().message,
            "--lora a.gguf: infertune demo does not support LoRA adapters");
}

TEST(ForeignFlags, OnlyTheSingleDashFormsAreRewritten) {
  const auto aliases = foreign_flag_aliases(kTable);
  ASSERT_EQ(aliases.size(), 3u);
  EXPECT_EQ(aliases[0].from, "-cb");
  EXPECT_EQ(aliases[0].to, "--batched");
  EXPECT_EQ(aliases[1].from, "-sp");
  EXPECT_EQ(aliases[2].from, "-ncmoe");
  EXPECT_EQ(aliases[2].to, "--moe");
}

TEST(ForeignFlags, TheHelpSaysWhatIsTakenUnderTheToolsHeading) {
  CLI::App app;
  ForeignFlagText text;
  add_foreign_flags(app, kTable, text);
  const std::string help = app.help();
  EXPECT_THAT(help, HasSubstr("other-tool's flags"));
  EXPECT_THAT(help, HasSubstr("-cb: Taken: always batched"));
  EXPECT_THAT(help, HasSubstr("-sp: Not supported: special tokens"));
  EXPECT_THAT(help,
              HasSubstr("-ncmoe: Only 0 (other-tool's default): MoE offload is not supported; dense models only"));
  EXPECT_THAT(help, HasSubstr("Not supported: LoRA adapters"));
}

}  // namespace
}  // namespace infertune
