#pragma once
// Settings back to command-line flags, spelled for infertune or for llama.cpp's tools (llama-cli,
// llama-server), generated from the settings table: every setting whose value is not its "not set" value,
// in table order, e.g. {"-t", "8", "-b", "2048", "-ub", "512", "-ctk", "f16", "-ctv", "f16", "-fa", "auto"}.
// Values are raw (the caller quotes them for a shell).
#include <string>
#include <string_view>
#include <vector>

#include "engine/settings/engine_settings.h"
#include "engine/settings/setting.h"

namespace infertune {

enum class Spelling { infertune, llama_cpp };

// Whether the canonical `value` means "not set" for the tools of `spelling`, so that printed configurations and
// command lines leave it out (llama.cpp's own "not set" where its tools' default differs: -ngl auto).
bool is_unset_value(const Setting& setting, std::string_view value, Spelling spelling = Spelling::infertune);

// For infertune, the settings `command` takes; for llama.cpp, every setting (its run tools take them all).
// Switch-style settings (--no-mmap) appear as the switch where `command` takes them so.
std::vector<std::string> setting_command_flags(const EngineSettings& settings, Command command, Spelling spelling);

}  // namespace infertune
