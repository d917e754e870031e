#pragma once
// A candidate as command lines a user can paste: `infertune run` with the flags it takes and the llama.cpp
// equivalent (llama-cli), or, when the configuration has parallel sequences (-np: server slots) or is the serving
// scenario's, `infertune serve` and `llama-server`; all generated from the settings table
// (engine/settings/command_line.h) from the candidate's stored config. A setting at its "not set" value is left out, as
// the tools read its absence (-c 0, --numa none, -C 0x0, -np 1; -ngl 0 for infertune, -ngl auto for llama.cpp's
// tools, whose lines therefore say -ngl 0). What a command cannot do is said in a note, never silently dropped.
#include <cstdint>
#include <optional>
#include <string>

#include "sweeps/recommend/recommend.h"

namespace infertune {

// host_physical_cores resolves -t 0 / -tb 0 (the sweep's "as many as physical cores") to a number; `serving`:
// server lines whatever the -np.
CommandLines command_lines(const Candidate& candidate, std::optional<int64_t> host_physical_cores,
                           bool serving = false);

// POSIX shell quoting: the text unchanged when it is plain, else in single quotes.
std::string shell_quote(const std::string& text);

}  // namespace infertune
