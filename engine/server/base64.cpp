#include "engine/server/base64.h"

#include <algorithm>
#include <cstdint>

namespace infertune {

std::string base64_encode(std::span<const std::byte> bytes) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const size_t n = std::min<size_t>(3, bytes.size() - i);
    uint32_t group = 0;  // up to 24 bits, the first byte highest
    for (size_t k = 0; k < 3; ++k) group = (group << 8) | (k < n ? std::to_integer<uint32_t>(bytes[i + k]) : 0u);
    for (size_t k = 0; k < 4; ++k) out += k <= n ? kAlphabet[(group >> (18 - 6 * k)) & 63] : '=';
  }
  return out;
}

}  // namespace infertune
