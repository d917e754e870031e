#pragma once
// CLI11 2.1 accepts only one-letter names after a single dash, so llama.cpp's multi-letter short flags
// (-tb, and elsewhere -ngl, -ub, -np, -ctk, ...) cannot be registered as such. The command dispatcher
// rewrites them to their long forms before CLI11 parses; each area lists its own aliases.
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace infertune {

struct FlagAlias {
  std::string_view from;  // "-tb"
  std::string_view to;    // "--threads-batch"
};

// Replaces every argument equal to an alias's `from`, or starting with `from=`, by its `to` form. Stops at
// "--" (what follows is not flags).
void rewrite_flag_aliases(std::vector<std::string>& args, std::span<const FlagAlias> aliases);

}  // namespace infertune
