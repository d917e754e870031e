#include "engine/cli/flag_aliases.h"

namespace infertune {

void rewrite_flag_aliases(std::vector<std::string>& args, std::span<const FlagAlias> aliases) {
  for (std::string& arg : args) {
    if (arg == "--") return;
    for (const FlagAlias& alias : aliases) {
      const std::string_view text(arg);
      if (text == alias.from) {
        arg = std::string(alias.to);
        break;
      }
      if (text.size() > alias.from.size() && text.substr(0, alias.from.size()) == alias.from &&
          text[alias.from.size()] == '=') {
        arg = std::string(alias.to) + std::string(text.substr(alias.from.size()));
        break;
      }
    }
  }
}

}  // namespace infertune
