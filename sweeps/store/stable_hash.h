#pragma once
// Hashes that identify a trial configuration or a sweep spec across runs (what --resume matches on), so
// they must never change: FNV-1a 64 over canonical text, as 16 lowercase hex digits.
#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

#include "kernels/result.h"

namespace infertune {

std::string stable_hash(std::string_view text);

// The hash of a configuration's compact JSON with keys sorted: the same settings in any key order hash
// alike. Number spellings matter (1 and 1.0 differ), so writers should emit one type per field.
std::string config_hash(const nlohmann::json& config);

// A model file's identity by content: FNV-1a 64 over the file's little-endian 64-bit words (the tail bytes one
// by one), as 16 hex digits; fast enough to hash a many-gigabyte model at every sweep start. The models table's
// content_hash and the names of quantization variants in the model cache. Errors name the file.
Result<std::string> file_content_hash(const std::string& path);

}  // namespace infertune
