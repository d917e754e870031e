#pragma once
// The sampling flags of `run`, `serve` and the benchmarks, with llama.cpp's names, meanings and defaults:
// --temp --top-k --top-p --min-p --repeat-penalty --repeat-last-n --frequency-penalty --presence-penalty
// -s/--seed (where -1, as in llama.cpp, means a random seed). The defaults shown are params' values at
// the call. Each value is range-checked while parsing (engine/cli/flag_ranges.h; the error names the flag,
// the value and what is allowed): --top-k >= 0 (0 = off), --top-p in (0, 1], --min-p in [0, 1],
// --repeat-penalty > 0, --repeat-last-n >= -1; --temp and the frequency/presence penalties any finite
// number, since a negative one means something (greedy, as in llama.cpp; favouring repeats, as in
// OpenAI's API). validate(params) (SamplerChain::create) checks values that come from elsewhere, such as
// a request, where a negative top-k still means off.
#include <CLI/CLI.hpp>

#include "engine/sampling/sampling_params.h"

namespace infertune {

// `params` must outlive the parse of `command`.
void add_sampling_flags(CLI::App& command, SamplingParams& params);

}  // namespace infertune
