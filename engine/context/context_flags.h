#pragma once
// The batch, KV cache and attention flags of `run` (and of any command that creates a Context), with
// llama.cpp's names and meanings: -b/--batch-size, -ub/--ubatch-size, -ctk/--cache-type-k,
// -ctv/--cache-type-v, -fa/--flash-attn on|off|auto. CLI11 checks the values while parsing (-b and -ub in
// 1..2^20; engine/cli/flag_ranges.h), and the errors name the flag.
//
// The multi-letter short forms reach CLI11 only as their long forms: pass the command line through
// rewrite_flag_aliases(args, context_flag_aliases()) first (engine/cli/flag_aliases.h).
#include <CLI/CLI.hpp>

#include <span>

#include "engine/context/context.h"
#include "engine/cli/flag_aliases.h"

namespace infertune {

// `params` must outlive the parse of `command`; its fields are set by the flags given, and the defaults
// shown are its values at the call.
void add_context_flags(CLI::App& command, ContextParams& params);

// {"-ub", "--ubatch-size"}, {"-ctk", "--cache-type-k"}, {"-ctv", "--cache-type-v"}, {"-fa", "--flash-attn"},
// {"-np", "--parallel"}
std::span<const FlagAlias> context_flag_aliases();

}  // namespace infertune
