#include "engine/settings/command_line.h"

#include "engine/settings/settings_table.h"

namespace infertune {

bool is_unset_value(const Setting& setting, std::string_view value, Spelling spelling) {
  const bool llama_cpp_default = spelling == Spelling::llama_cpp && !setting.llama_unset_value.empty();
  const std::string_view unset = llama_cpp_default ? setting.llama_unset_value : setting.unset_value;
  return !unset.empty() && value == unset;
}

std::vector<std::string> setting_command_flags(const EngineSettings& settings, Command command, Spelling spelling) {
  std::vector<std::string> flags;
  for (const Setting& s : all_settings()) {
    if (spelling == Spelling::infertune && !s.taken_by(command)) continue;
    const std::string value = s.read(settings);
    if (is_unset_value(s, value, spelling)) continue;
    if (s.as_switch(command)) {
      if (value == s.switch_value) flags.emplace_back(s.switch_flag);
      continue;
    }
    flags.emplace_back(spelling == Spelling::llama_cpp ? s.llama_flag : s.shown_flag());
    flags.push_back(value);
  }
  return flags;
}

}  // namespace infertune
