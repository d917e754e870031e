#include "sweeps/store/stable_hash.h"

#include <fmt/format.h>

#include <cstdint>

namespace infertune {

std::string stable_hash(std::string_view text) {
  uint64_t hash = 0xcbf29ce484222325ull;  // FNV-1a 64 offset basis and prime
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ull;
  }
  return fmt::format("{:016x}", hash);
}

// nlohmann::json (unlike ordered_json) keeps object keys sorted, which makes dump() canonical.
std::string config_hash(const nlohmann::json& config) {
  return stable_hash(config.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace infertune
