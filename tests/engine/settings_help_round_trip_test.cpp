// Every command's --help, as the binary prints it, against the settings table: each setting the command takes
// is listed with the table's default, and giving that default back to the command is accepted by its parser
// (the command then fails on the model file, which does not exist: proof the flags got through).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "engine/settings/settings_table.h"
#include "test_support.h"

namespace infertune {
namespace {

using ::testing::HasSubstr;

constexpr const char* kMissingModel = "/nonexistent/help-round-trip.gguf";

std::string help_of(std::string_view command) {
  const auto result = test::run_command(fmt::format("{} {} --help", test::infertune_binary(), command));
  EXPECT_EQ(result.exit_code, 0) << result.output;
  return result.output;
}

// The help of `flag`: its line and the next (CLI11 puts the description on the next line after a long name).
std::string line_of(const std::string& help, std::string_view flag) {
  for (size_t at = help.find(flag); at != std::string::npos; at = help.find(flag, at + 1)) {
    const size_t end = at + flag.size();
    if (end < help.size() && (help[end] == ' ' || help[end] == '\n') && (at == 0 || help[at - 1] != '-')) {
      const size_t begin = help.rfind('\n', at) + 1;
      const size_t next = help.find('\n', help.find('\n', at) + 1);
      return help.substr(begin, next == std::string::npos ? std::string::npos : next - begin);
    }
  }
  return "";
}

// The command line that gives `flag value` and otherwise only a model that does not exist.
std::string invocation(std::string_view command, std::string_view flag, std::string_view value) {
  const std::string extra = command == "run" ? "--prompt-tokens 1,2 -n 1" : command == "bench" ? "-r 1" : "";
  return fmt::format("{} {} -m {} {} {} {} 2>&1", test::infertune_binary(), command, kMissingModel, extra, flag, value);
}

TEST(SettingsHelp, EveryCommandListsItsSettingsWithTheTablesDefaultAndTakesItBack) {
  for (Command command : {Command::run, Command::bench, Command::batched_bench}) {
    const std::string_view name = command_name(command);
    const std::string help = help_of(name);
    for (const Setting* s : settings_of(command)) {
      const std::string_view flag = s->as_switch(command) ? s->switch_flag : s->long_flag;
      const std::string line = line_of(help, flag);
      ASSERT_FALSE(line.empty()) << name << " --help lacks " << flag << "\n" << help;
      if (s->as_switch(command)) continue;
      EXPECT_THAT(line, HasSubstr(fmt::format("default {})", s->default_value))) << name << ": " << line;
      for (std::string_view spelling : {s->short_flag, s->long_flag}) {
        if (spelling.empty()) continue;
        const auto result = test::run_command(invocation(name, spelling, s->default_value));
        EXPECT_THAT(result.output, HasSubstr(kMissingModel)) << name << " " << spelling << "\n" << result.output;
      }
    }
  }
}

TEST(SettingsHelp, SettingsOutputIsTheTable) {
  const auto result = test::run_command(fmt::format("{} settings", test::infertune_binary()));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  for (const Setting& s : all_settings()) EXPECT_THAT(result.output, HasSubstr(fmt::format("| `{}` |", s.key)));
}

}  // namespace
}  // namespace infertune
