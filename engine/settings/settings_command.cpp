// `infertune settings`: the tuning knobs every command shares (engine/settings/settings_table.h), as a Markdown
// table: which flags set each one, llama.cpp's spelling, the values allowed, the default, and which commands
// take one value or a list.
#include <fmt/format.h>

#include "engine/engine_commands.h"
#include "engine/settings/settings_markdown.h"

namespace infertune {

void add_settings_command(Subcommands& commands) {
  commands.add("settings",
               "List the engine settings (threads, batch, KV cache, ...) every command shares: flags, llama.cpp's "
               "spelling, allowed values, defaults, and which commands take a list",
               [] {
                 fmt::print("{}", settings_markdown());
                 return 0;
               });
}

}  // namespace infertune
