#pragma once
// Human- and machine-readable renderings of GGUF metadata values, with long arrays abbreviated.
#include <nlohmann/json.hpp>

#include <string>

#include "engine/gguf/gguf_value.h"

namespace infertune {

// "4096", "1e-05", "\"llama\"", "[\"<unk>\", \"<s>\", ... (32000 total)]".
std::string value_to_text(const GgufValue& value, size_t max_array_items = 8);

// Scalars as JSON values; arrays as {"type": "array", "element_type": ..., "count": N, "head": [...]}
// with at most max_array_items elements in "head" (all of them when the array is that short).
nlohmann::json value_to_json(const GgufValue& value, size_t max_array_items = 8);

}  // namespace infertune
