#pragma once
// A candidate as command lines a user can paste: `infertune run` with the flags it really accepts
// (engine/run/run_command.cpp, engine/context/context_flags.cpp, engine/threading/placement_flags.cpp) and
// the llama.cpp equivalent (llama-cli; llama-server when the configuration has parallel sequences, since
// only the server has -np). What a command cannot express is said in a note, never silently dropped.
#include <cstdint>
#include <optional>
#include <string>

#include "sweeps/recommend/recommend.h"

namespace infertune {

// host_physical_cores resolves -t 0 / -tb 0 (the sweep's "as many as physical cores") to a number.
CommandLines command_lines(const Candidate& candidate, std::optional<int64_t> host_physical_cores);

// POSIX shell quoting: the text unchanged when it is plain, else in single quotes.
std::string shell_quote(const std::string& text);

}  // namespace infertune
