#include "sweeps/store/stable_hash.h"

#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <vector>

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

Result<std::string> file_content_hash(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail("cannot read model '{}'", path);
  uint64_t hash = 0xcbf29ce484222325ull;  // FNV-1a 64 offset basis and prime
  constexpr uint64_t kPrime = 0x100000001b3ull;
  std::vector<char> buffer(size_t{1} << 22);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    const size_t n = static_cast<size_t>(in.gcount());
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      uint64_t word;
      std::memcpy(&word, buffer.data() + i, 8);  // x86-64 and every target here are little-endian
      hash = (hash ^ word) * kPrime;
    }
    for (; i < n; ++i) hash = (hash ^ static_cast<unsigned char>(buffer[i])) * kPrime;
  }
  if (in.bad()) return fail("error reading model '{}'", path);
  return fmt::format("{:016x}", hash);
}

}  // namespace infertune
