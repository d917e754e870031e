#pragma once
// Hashes that identify a trial configuration or a sweep spec across runs (what --resume matches on), so
// they must never change: FNV-1a 64 over canonical text, as 16 lowercase hex digits.
#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace infertune {

std::string stable_hash(std::string_view text);

// The hash of a configuration's compact JSON with keys sorted: the same settings in any key order hash
// alike. Number spellings matter (1 and 1.0 differ), so writers should emit one type per field.
std::string config_hash(const nlohmann::json& config);

}  // namespace infertune
