#pragma once
// `--prompt-tokens 1,2,3`: a comma-separated list of token ids.
#include <cstdint>
#include <string_view>
#include <vector>

#include "kernels/result.h"

namespace infertune {

// Ids separated by commas (spaces around them allowed). Errors name the item and its position: an empty
// item, a non-number, a negative id, or an empty list.
Result<std::vector<int32_t>> parse_token_list(std::string_view text);

}  // namespace infertune
