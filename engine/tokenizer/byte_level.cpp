#include "engine/tokenizer/byte_level.h"

#include "engine/tokenizer/utf8.h"

namespace infertune {
namespace {

bool stands_for_itself(unsigned b) { return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE); }

}  // namespace

ByteLevelAlphabet::ByteLevelAlphabet() {
  to_byte_.fill(-1);
  char32_t next_substitute = 0x100;
  for (unsigned b = 0; b < 256; ++b) {
    const char32_t cp = stands_for_itself(b) ? char32_t(b) : next_substitute++;
    to_code_point_[b] = cp;
    to_utf8_[b] = utf8_encode(cp);
    to_byte_[cp] = static_cast<int16_t>(b);
  }
}

std::optional<uint8_t> ByteLevelAlphabet::byte(char32_t cp) const {
  if (cp >= to_byte_.size() || to_byte_[cp] < 0) return std::nullopt;
  return static_cast<uint8_t>(to_byte_[cp]);
}

std::string ByteLevelAlphabet::encode(std::string_view bytes) const {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) out += to_utf8_[static_cast<uint8_t>(c)];
  return out;
}

std::string ByteLevelAlphabet::decode(std::string_view text) const {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t start = pos;
    const char32_t cp = next_code_point(text, pos);
    if (auto b = byte(cp)) {
      out += static_cast<char>(*b);
    } else {
      out.append(text.substr(start, pos - start));
    }
  }
  return out;
}

const ByteLevelAlphabet& byte_level_alphabet() {
  static const ByteLevelAlphabet alphabet;
  return alphabet;
}

}  // namespace infertune
