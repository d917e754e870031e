#pragma once
// The flags of the settings table (settings_table.h), generated for a command:
//   - run-style commands (run, batched-bench, serve) take one value per setting: add_setting_flags writes it
//     into an EngineSettings while CLI11 parses, so a bad value is refused before any model is loaded, with
//     the flag, the value and what is allowed in the message;
//   - bench and sweep take comma lists and ranges (value_lists.h) of the settings marked so, and one value of
//     the others: add_setting_list_flags collects the text and parse_setting_values checks and spells it
//     canonically.
// llama.cpp's multi-letter short flags (-tb, -ngl, -ctk, ...) cannot be CLI11 names; setting_flag_aliases
// gives the rewrites to their long forms for one command (sweeps/main.cpp applies them per subcommand).
#include <CLI/CLI.hpp>

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "engine/cli/flag_aliases.h"
#include "engine/settings/engine_settings.h"
#include "engine/settings/setting.h"
#include "engine/threading/cpu_set.h"
#include "kernels/result.h"

namespace infertune {

// The CPUs a -C mask may name: those of this machine the process may use (hwloc's allowed PUs).
Result<CpuSet> this_machine_cpus();

// Where -C is checked: the live machine, or a fixed set in a test.
using MachineCpus = std::function<Result<CpuSet>()>;

// The help line of a setting for `command`: its help, what is allowed and the default shown.
std::string setting_help(const Setting& setting, Command command, std::string_view default_shown);

// Every setting `command` takes, as options writing into `settings` (which must outlive the parse); the
// defaults shown are its values at the call.
void add_setting_flags(CLI::App& app, Command command, EngineSettings& settings,
                       MachineCpus machine = this_machine_cpus);

// The text of every occurrence of every setting flag, by setting key.
struct SettingText {
  std::map<std::string, std::vector<std::string>> occurrences;
};

// Every setting `command` takes, as options collecting their text into `text` (which must outlive the
// parse), under their table groups in --help.
void add_setting_list_flags(CLI::App& app, Command command, SettingText& text);

// The values of one setting given as `occurrences` (each a comma list where the setting takes a list for
// `command`, else exactly one occurrence of one value), checked and canonical; integer lists expand ranges.
// Errors start with `where` (the flag, or "spec.yaml:4: threads").
Result<std::vector<std::string>> parse_setting_values(const Setting& setting, Command command,
                                                      const std::vector<std::string>& occurrences,
                                                      std::string_view where);

// Canonical values of the settings that were given, by key; the others are absent.
using SettingValues = std::map<std::string, std::vector<std::string>>;
Result<SettingValues> parse_setting_text(const SettingText& text, Command command);

// The machine checks of the given values (-C masks name CPUs of this machine only); errors name the flag.
Status check_settings_on_machine(const SettingValues& values, const MachineCpus& machine);

// {"-tb", "--threads-batch"}, {"-ngl", "--n-gpu-layers"}, ... for the settings `command` takes.
std::vector<FlagAlias> setting_flag_aliases(Command command);

}  // namespace infertune
