#include "engine/grammar/gbnf_text.h"

#include <fmt/format.h>

#include "engine/tokenizer/utf8.h"

namespace infertune {
namespace {

// One code point: printable ASCII as is (with a backslash before those in `escaped`), the rest as an escape.
void append_code_point(std::string& out, uint32_t cp, std::string_view escaped) {
  if (cp >= 0x20 && cp < 0x7F) {
    if (escaped.find(static_cast<char>(cp)) != std::string_view::npos) out += '\\';
    out += static_cast<char>(cp);
  } else if (cp < 0x80) {
    out += fmt::format("\\x{:02X}", cp);
  } else if (cp <= 0xFFFF) {
    out += fmt::format("\\u{:04X}", cp);
  } else {
    out += fmt::format("\\U{:08X}", cp);
  }
}

}  // namespace

std::vector<uint32_t> code_points(std::string_view utf8) {
  std::vector<uint32_t> out;
  for (size_t pos = 0; pos < utf8.size();) out.push_back(static_cast<uint32_t>(next_code_point(utf8, pos)));
  return out;
}

std::string gbnf_literal(std::string_view utf8) {
  std::string out = "\"";
  for (uint32_t cp : code_points(utf8)) append_code_point(out, cp, "\"\\");
  return out + "\"";
}

std::string gbnf_class(std::span<const CodePointRange> ranges, bool negated) {
  std::string out = negated ? "[^" : "[";
  for (const CodePointRange& range : ranges) {
    append_code_point(out, range.first, "\\]-^[\"");
    if (range.last == range.first) continue;
    out += '-';
    append_code_point(out, range.last, "\\]-^[\"");
  }
  return out + "]";
}

}  // namespace infertune
