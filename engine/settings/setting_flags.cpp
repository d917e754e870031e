#include "engine/settings/setting_flags.h"

#include <fmt/format.h>
#include <cctype>

#include "engine/settings/settings_table.h"
#include "engine/settings/value_lists.h"
#include "engine/threading/topology.h"

namespace infertune {
namespace {

bool is_multi_letter_short(std::string_view flag) { return flag.size() > 2 && flag[0] == '-' && flag[1] != '-'; }

// CLI11 names: the one-letter short flag and the long one ("-t,--threads"); a multi-letter short flag reaches
// CLI11 as the long one (setting_flag_aliases).
std::string cli_names(const Setting& s) {
  if (s.short_flag.empty() || is_multi_letter_short(s.short_flag)) return std::string(s.long_flag);
  return fmt::format("{},{}", s.short_flag, s.long_flag);
}

// Checks a value of `setting` and rewrites it canonically, for CLI11's ->transform(); CLI11 puts the flag's
// name in front of the message.
CLI::Validator setting_validator(const Setting& setting, MachineCpus machine) {
  return CLI::Validator(
      [&setting, machine = std::move(machine)](std::string& text) {
        auto value = setting.canonical(text);
        if (!value) return value.error().message;
        if (setting.check_on_machine) {
          auto cpus = machine();
          if (!cpus) return cpus.error().message;
          if (Status fits = setting.check_on_machine(*value, *cpus); !fits) return fits.error().message;
        }
        text = *value;
        return std::string();
      },
      "");
}

// What CLI11 shows after the flag: the kind of value (the allowed values are in the help text).
std::string type_name(const Setting& setting) {
  switch (setting.kind) {
    case ValueKind::Integer:
      return "INT";
    case ValueKind::Boolean:
      return "0|1";
    case ValueKind::Word:
      break;
  }
  return "WORD";
}

}  // namespace

Result<CpuSet> this_machine_cpus() {
  auto topology = Topology::load_machine();
  if (!topology) return topology.error();
  return topology->all_cpus();
}

std::string setting_help(const Setting& setting, Command command, std::string_view default_shown) {
  if (setting.as_switch(command)) return std::string(setting.switch_help);
  std::string help;
  if (is_multi_letter_short(setting.short_flag)) help = fmt::format("{}: ", setting.short_flag);
  help += setting.help;
  help += fmt::format(" ({}; default {})", setting.allowed(), default_shown);
  return help;
}

void add_setting_flags(CLI::App& app, Command command, EngineSettings& settings, MachineCpus machine) {
  for (const Setting* s : settings_of(command)) {
    const Setting& setting = *s;
    if (setting.as_switch(command)) {
      app.add_flag_callback(
             std::string(setting.switch_flag), [&setting, &settings] { setting.apply(setting.switch_value, settings); },
             setting_help(setting, command, ""))
          ->group(std::string(setting.group));
      continue;
    }
    app.add_option_function<std::string>(
           cli_names(setting), [&setting, &settings](const std::string& value) { setting.apply(value, settings); },
           setting_help(setting, command, setting.read(settings)))
        ->transform(setting_validator(setting, machine))
        ->type_name(type_name(setting))
        ->group(std::string(setting.group));
  }
}

void add_setting_list_flags(CLI::App& app, Command command, SettingText& text) {
  for (const Setting* s : settings_of(command)) {
    const Setting& setting = *s;
    const bool list = setting.takes_list(command);
    std::string help = setting_help(setting, command, setting.default_value);
    if (list) help += "; a comma list" + std::string(setting.kind == ValueKind::Integer ? " or range" : "");
    app.add_option(cli_names(setting), text.occurrences[std::string(setting.key)], help)
        ->type_name(list ? "LIST" : type_name(setting))
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
        ->group(std::string(setting.group));
  }
}

Result<std::vector<std::string>> parse_setting_values(const Setting& setting, Command command,
                                                      const std::vector<std::string>& occurrences,
                                                      std::string_view where) {
  if (!setting.takes_list(command)) {
    if (occurrences.size() != 1) return fail("{}: takes one value, given {} times", where, occurrences.size());
    auto value = setting.parse(occurrences.front(), where);
    if (!value) return value.error();
    return std::vector<std::string>{*value};
  }
  std::vector<std::string> items;
  if (setting.kind == ValueKind::Integer) {
    // Numbers and ranges expand; a word ("auto" of -ngl) is left to the setting to accept or refuse.
    auto words = parse_word_list(occurrences, where);
    if (!words) return words.error();
    for (const std::string& word : *words) {
      if (std::isalpha(static_cast<unsigned char>(word.front())) && setting.parse(word, where)) {
        items.push_back(word);
        continue;
      }
      auto numbers = parse_int_list({word}, where, true);
      if (!numbers) return numbers.error();
      for (int n : *numbers) items.push_back(std::to_string(n));
      if (items.size() > kMaxRangeValues) break;
    }
  } else {
    auto words = parse_word_list(occurrences, where);
    if (!words) return words.error();
    items = std::move(*words);
  }
  if (items.size() > kMaxRangeValues)
    return fail("{}: the values expand to more than {} in all", where, kMaxRangeValues);
  std::vector<std::string> values;
  for (const std::string& item : items) {
    auto value = setting.parse(item, where);
    if (!value) return value.error();
    values.push_back(std::move(*value));
  }
  return values;
}

Result<SettingValues> parse_setting_text(const SettingText& text, Command command) {
  SettingValues values;
  for (const auto& [key, occurrences] : text.occurrences) {
    if (occurrences.empty()) continue;
    const Setting* setting = find_setting(key);
    if (!setting) return fail("unknown setting '{}'", key);
    auto parsed = parse_setting_values(*setting, command, occurrences, setting->shown_flag());
    if (!parsed) return parsed.error();
    values[key] = std::move(*parsed);
  }
  return values;
}

Status check_settings_on_machine(const SettingValues& values, const MachineCpus& machine) {
  std::optional<CpuSet> cpus;
  for (const auto& [key, list] : values) {
    const Setting* setting = find_setting(key);
    if (!setting || !setting->check_on_machine) continue;
    for (const std::string& value : list) {
      if (!cpus) {
        auto loaded = machine();
        if (!loaded) return fail("{}: {}", setting->shown_flag(), loaded.error().message);
        cpus = std::move(*loaded);
      }
      if (Status s = setting->check_on_machine(value, *cpus); !s) {
        return fail("{}: {}", setting->shown_flag(), s.error().message);
      }
    }
  }
  return {};
}

std::vector<FlagAlias> setting_flag_aliases(Command command) {
  std::vector<FlagAlias> aliases;
  for (const Setting* s : settings_of(command)) {
    if (is_multi_letter_short(s->short_flag)) aliases.push_back({s->short_flag, s->long_flag});
  }
  return aliases;
}

}  // namespace infertune
