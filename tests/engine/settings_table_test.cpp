// The settings table (engine/settings) against what it claims: names are unique, the engine's defaults are the
// table's, every value a setting accepts survives parse -> apply -> read -> print -> parse unchanged, the
// flags each command registers are exactly the table's for that command (in --help too), and values are
// refused naming the flag.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "engine/settings/command_line.h"
#include "engine/settings/setting_flags.h"
#include "engine/settings/settings_markdown.h"
#include "engine/settings/settings_table.h"

namespace infertune {
namespace {

using ::testing::HasSubstr;

// Values each setting must accept, as a user may write them, and their canonical spelling. A new setting
// without samples here fails EveryValueRoundTrips: add some.
const std::map<std::string, std::vector<std::pair<std::string, std::string>>>& samples() {
  static const std::map<std::string, std::vector<std::pair<std::string, std::string>>> table{
      {"threads", {{"-1", "0"}, {"0", "0"}, {"1", "1"}, {"+8", "8"}, {"1024", "1024"}}},
      {"threads_batch", {{"-1", "0"}, {"0", "0"}, {"3", "3"}}},
      {"cpu_mask", {{"0x0", "0x0"}, {"0", "0x0"}, {"0x3", "0x3"}, {"0-1", "0-1"}}},
      {"cpu_strict", {{"0", "0"}, {"1", "1"}, {"true", "1"}, {"false", "0"}}},
      {"numa", {{"none", "none"}, {"distribute", "distribute"}, {"isolate", "isolate"}, {"numactl", "numactl"}}},
      {"prio", {{"0", "0"}, {"3", "3"}}},
      {"poll", {{"0", "0"}, {"50", "50"}, {"100", "100"}}},
      {"n_gpu_layers", {{"-1", "-1"}, {"0", "0"}, {"99", "99"}}},
      {"main_gpu", {{"0", "0"}, {"3", "3"}}},
      {"split_mode", {{"layer", "layer"}, {"none", "none"}}},
      {"tensor_split", {{"0", "0"}, {"3/1", "3/1"}, {"3,1", "3/1"}, {"0/0", "0"}, {"0.5/0.25/0.25", "0.5/0.25/0.25"}}},
      {"kv_offload", {{"1", "1"}, {"0", "0"}, {"false", "0"}}},
      {"ctx_size", {{"0", "0"}, {"4096", "4096"}}},
      {"batch_size", {{"1", "1"}, {"2048", "2048"}}},
      {"ubatch_size", {{"512", "512"}, {"7", "7"}}},
      {"parallel", {{"1", "1"}, {"256", "256"}}},
      {"cache_type_k", {{"f16", "f16"}, {"Q8_0", "q8_0"}, {"f32", "f32"}, {"bf16", "bf16"}, {"q4_0", "q4_0"}}},
      {"cache_type_v", {{"F32", "f32"}, {"q8_0", "q8_0"}}},
      {"flash_attn", {{"on", "on"}, {"1", "on"}, {"true", "on"}, {"off", "off"}, {"0", "off"}, {"-1", "auto"}}},
      {"mmap", {{"1", "1"}, {"0", "0"}}},
      {"repack", {{"1", "1"}, {"0", "0"}, {"true", "1"}}},
  };
  return table;
}

// A CPU set every mask above fits.
Result<CpuSet> four_cpus() { return CpuSet::range(0, 3); }

// `args` parsed by the flags `command` registers, with its aliases, into `settings`; CLI11's message or "".
std::string parse(Command command, std::vector<std::string> args, EngineSettings& settings) {
  CLI::App app("test");
  add_setting_flags(app, command, settings, four_cpus);
  rewrite_flag_aliases(args, setting_flag_aliases(command));
  std::reverse(args.begin(), args.end());
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  return "";
}

TEST(SettingsTable, NamesAreUnique) {
  std::set<std::string_view> keys, config_keys, flags;
  for (const Setting& s : all_settings()) {
    EXPECT_TRUE(keys.insert(s.key).second) << s.key;
    EXPECT_TRUE(config_keys.insert(s.config_key).second) << s.config_key;
    for (std::string_view flag : {s.short_flag, s.long_flag, s.switch_flag}) {
      if (!flag.empty()) {
        EXPECT_TRUE(flags.insert(flag).second) << flag;
      }
    }
    EXPECT_EQ(find_setting(s.key), &s);
    EXPECT_EQ(find_setting_by_config_key(s.config_key), &s);
    EXPECT_EQ(find_setting_by_flag(s.long_flag), &s);
    EXPECT_FALSE(s.llama_flag.empty()) << s.key;
    EXPECT_FALSE(s.help.empty()) << s.key;
  }
}

TEST(SettingsTable, TheEnginesDefaultsAreTheTables) {
  const EngineSettings defaults;
  for (const Setting& s : all_settings()) {
    EXPECT_EQ(s.read(defaults), s.default_value) << s.key;
    auto canonical = s.parse(s.default_value);
    ASSERT_TRUE(canonical) << canonical.error().message;
    EXPECT_EQ(*canonical, s.default_value) << s.key;
  }
}

TEST(SettingsTable, EveryValueRoundTrips) {
  for (const Setting& s : all_settings()) {
    auto it = samples().find(std::string(s.key));
    ASSERT_NE(it, samples().end()) << s.key << ": add sample values to this test";
    for (const auto& [given, canonical] : it->second) {
      auto parsed = s.parse(given);
      ASSERT_TRUE(parsed) << s.key << " " << given << ": " << parsed.error().message;
      EXPECT_EQ(*parsed, canonical) << s.key << " " << given;
      EngineSettings settings;
      s.apply(*parsed, settings);
      EXPECT_EQ(s.read(settings), canonical) << s.key << " " << given;
      EXPECT_EQ(s.parse(canonical).value(), canonical) << s.key << ": canonical text is a fixed point";
    }
  }
}

TEST(SettingsTable, BadValuesAreRefusedNamingTheFlag) {
  const std::vector<std::pair<std::string, std::string>> bad{
      {"threads", "-2"},        {"threads", "x"},        {"cpu_mask", "zz"},   {"cpu_strict", "2"},
      {"numa", "spread"},       {"prio", "4"},           {"poll", "101"},      {"n_gpu_layers", "-5"},
      {"ctx_size", "-1"},       {"batch_size", "0"},     {"ubatch_size", "0"}, {"parallel", "0"},
      {"cache_type_k", "q4_k"}, {"flash_attn", "maybe"}, {"mmap", "2"},        {"repack", "yes"},
      {"split_mode", "row"},    {"tensor_split", "3:1"}, {"tensor_split", "-1/1"},
  };
  for (const auto& [key, value] : bad) {
    const Setting& s = *find_setting(key);
    auto parsed = s.parse(value);
    ASSERT_FALSE(parsed) << key << " " << value;
    EXPECT_THAT(parsed.error().message, HasSubstr(std::string(s.shown_flag()) + ": ")) << key;
  }
}

// Every command line the table prints for a command parses back, through that command's own flags, into the
// settings it was printed from.
TEST(SettingsTable, PrintedCommandLinesParseBackUnchanged) {
  for (Command command : {Command::run, Command::batched_bench, Command::serve}) {
    for (const Setting& varied : all_settings()) {
      if (!varied.taken_by(command)) continue;
      for (const auto& [given, canonical] : samples().at(std::string(varied.key))) {
        EngineSettings printed;
        varied.apply(canonical, printed);
        const std::vector<std::string> flags = setting_command_flags(printed, command, Spelling::infertune);
        EngineSettings parsed;
        ASSERT_EQ(parse(command, flags, parsed), "") << command_name(command) << " " << varied.key << " " << given;
        for (const Setting* s : settings_of(command)) {
          EXPECT_EQ(s->read(parsed), s->read(printed))
              << command_name(command) << ": " << s->key << " after " << varied.key << " = " << canonical;
        }
      }
    }
  }
}

TEST(SettingsTable, UnsetValuesAreLeftOutOfCommandLines) {
  EngineSettings settings;
  settings.placement.threads = 4;
  settings.use_mmap = false;
  EXPECT_EQ(setting_command_flags(settings, Command::run, Spelling::infertune),
            (std::vector<std::string>{"-t", "4", "-b", "2048", "-ub", "512", "-ctk", "f16", "-ctv", "f16", "-fa",
                                      "auto", "--no-mmap"}));
  settings.context.n_seq_max = 4;  // run has no -np; llama.cpp's tools take it (llama-server)
  // llama.cpp's tools offload what fits unless told -ngl 0: their line says it, and leaves out auto instead.
  EXPECT_EQ(setting_command_flags(settings, Command::run, Spelling::llama_cpp),
            (std::vector<std::string>{"-t", "4", "-ngl", "0", "-b", "2048", "-ub", "512", "-np", "4", "-ctk", "f16",
                                      "-ctv", "f16", "-fa", "auto", "--no-mmap"}));
  settings.n_gpu_layers = kGpuLayersAuto;
  const std::vector<std::string> automatic = setting_command_flags(settings, Command::run, Spelling::llama_cpp);
  EXPECT_EQ(std::ranges::find(automatic, "-ngl"), automatic.end());
}

// Each command's --help lists the table's settings for that command, and no other setting.
TEST(SettingsTable, HelpListsExactlyTheCommandsSettings) {
  for (Command command : {Command::run, Command::bench, Command::batched_bench, Command::sweep, Command::serve}) {
    CLI::App app("test");
    EngineSettings settings;
    SettingText text;
    const bool lists = command == Command::bench || command == Command::sweep;
    if (lists) {
      add_setting_list_flags(app, command, text);
    } else {
      add_setting_flags(app, command, settings, four_cpus);
    }
    const std::string help = app.help();
    for (const Setting& s : all_settings()) {
      const std::string flag(s.as_switch(command) ? s.switch_flag : s.long_flag);
      const bool listed = help.find(flag + " ") != std::string::npos || help.find(flag + "\n") != std::string::npos;
      EXPECT_EQ(listed, s.taken_by(command)) << command_name(command) << ": " << flag << "\n" << help;
    }
  }
}

TEST(SettingsTable, ListsExpandRangesAndCheckEveryValue) {
  const Setting& threads = *find_setting("threads");
  auto values = parse_setting_values(threads, Command::bench, {"1-4*2", "-1"}, "-t");
  ASSERT_TRUE(values) << values.error().message;
  EXPECT_EQ(*values, (std::vector<std::string>{"1", "2", "4", "0"}));
  auto bad = parse_setting_values(threads, Command::bench, {"1,2000"}, "-t");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "-t: 2000 is out of range; allowed: -1 (auto), 0 (auto) or 1..1024");
  // Ranges that each fit add up: the cap is on the flag's whole list.
  auto piled = parse_setting_values(threads, Command::bench, {"1-1024,1-1024", "1-1024,1-1024", "1-1024"}, "-t");
  ASSERT_FALSE(piled);
  EXPECT_THAT(piled.error().message, HasSubstr("-t: the values expand to more than 4096 in all"));
  // Where a command takes one value, a list is refused.
  auto one = parse_setting_values(*find_setting("numa"), Command::bench, {"isolate", "numactl"}, "--numa");
  ASSERT_FALSE(one);
  EXPECT_THAT(one.error().message, HasSubstr("--numa: takes one value"));
}

TEST(SettingsTable, AliasesArePerCommand) {
  auto has_alias = [](Command command, std::string_view from) {
    const auto aliases = setting_flag_aliases(command);
    return std::ranges::any_of(aliases, [&](const FlagAlias& a) { return a.from == from; });
  };
  EXPECT_TRUE(has_alias(Command::run, "-tb"));
  EXPECT_FALSE(has_alias(Command::bench, "-tb"));  // llama-bench has no -tb
  EXPECT_TRUE(has_alias(Command::sweep, "-np"));
  EXPECT_FALSE(has_alias(Command::run, "-np"));
}

TEST(SettingsTable, MarkdownHasARowPerSetting) {
  const std::string md = settings_markdown();
  for (const Setting& s : all_settings()) EXPECT_THAT(md, HasSubstr("| `" + std::string(s.key) + "` |"));
  EXPECT_THAT(md, HasSubstr("| `mmap` | `-mmp`, `--mmap`, `--no-mmap` | `-mmp` |"));
}

}  // namespace
}  // namespace infertune
