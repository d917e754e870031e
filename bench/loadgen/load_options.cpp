#include "bench/loadgen/load_options.h"

#include <charconv>
#include <cmath>
#include <string>

namespace infertune {
namespace {

Result<double> parse_number(std::string_view text) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v)) {
    return fail("'{}' is not a number", text);
  }
  return v;
}

}  // namespace

Result<LengthRange> parse_length_range(std::string_view text) {
  const size_t colon = text.find(':');
  const std::string_view low_text = text.substr(0, colon);
  const std::string_view high_text = colon == std::string_view::npos ? low_text : text.substr(colon + 1);
  auto low = parse_number(low_text);
  auto high = parse_number(high_text);
  if (!low || !high || *low < 1 || *high < *low || *high > 1e6 || std::floor(*low) != *low ||
      std::floor(*high) != *high) {
    return fail("'{}' is not a length in tokens: N or LOW:HIGH with 1 <= LOW <= HIGH", text);
  }
  return LengthRange{static_cast<uint32_t>(*low), static_cast<uint32_t>(*high)};
}

Result<double> parse_duration_seconds(std::string_view text) {
  double scale = 1;
  std::string_view number = text;
  if (text.ends_with("ms")) {
    scale = 1e-3;
    number = text.substr(0, text.size() - 2);
  } else if (text.ends_with("s")) {
    number = text.substr(0, text.size() - 1);
  }
  auto v = parse_number(number);
  if (!v || *v <= 0) return fail("'{}' is not a duration (500ms, 0.5s, 2)", text);
  return *v * scale;
}

}  // namespace infertune
