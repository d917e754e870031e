#pragma once
// The sampling flags of `run`, `serve` and the benchmarks, with llama.cpp's names, meanings and defaults:
// --temp --top-k --top-p --min-p --repeat-penalty --repeat-last-n --frequency-penalty --presence-penalty
// -s/--seed (where -1, as in llama.cpp, means a random seed). The defaults shown are params' values at
// the call. CLI11 checks only that each value parses; call validate(params) (or SamplerChain::create)
// after parsing for the range checks, whose errors name the flag.
#include <CLI/CLI.hpp>

#include "engine/sampling/sampling_params.h"

namespace infertune {

// `params` must outlive the parse of `command`.
void add_sampling_flags(CLI::App& command, SamplingParams& params);

}  // namespace infertune
