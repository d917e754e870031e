#include "engine/server/text_stream.h"

#include <algorithm>
#include <utility>

namespace infertune {

size_t incomplete_utf8_tail(std::string_view text) {
  // Look back over at most 3 continuation bytes for the lead byte of the last character.
  for (size_t back = 1; back <= std::min<size_t>(4, text.size()); ++back) {
    const auto byte = static_cast<unsigned char>(text[text.size() - back]);
    if ((byte & 0xC0) == 0x80) continue;  // a continuation byte
    const size_t length = byte < 0x80             ? 1
                          : (byte & 0xE0) == 0xC0 ? 2
                          : (byte & 0xF0) == 0xE0 ? 3
                          : (byte & 0xF8) == 0xF0 ? 4
                                                  : 1;
    return length > back ? back : 0;
  }
  return 0;  // only continuation bytes: invalid, not incomplete; send them
}

TextStream::TextStream(std::vector<std::string> stops) : stops_(std::move(stops)) {
  std::erase_if(stops_, [](const std::string& s) { return s.empty(); });
}

size_t TextStream::safe_end() const {
  // The longest tail of the text that is a proper prefix of a stop string stays back.
  size_t held = 0;
  for (const std::string& stop : stops_) {
    for (size_t n = std::min(stop.size() - 1, text_.size() - sent_); n > held; --n) {
      if (std::string_view(text_).substr(text_.size() - n) == std::string_view(stop).substr(0, n)) {
        held = n;
        break;
      }
    }
  }
  held = std::max(held, incomplete_utf8_tail(text_));
  return text_.size() - std::min(held, text_.size() - sent_);
}

std::string TextStream::push(std::string_view piece) {
  if (stopped()) return {};
  text_.append(piece);
  // A stop string can only begin in the unsent part: anything that could have begun one was held back.
  size_t first = std::string::npos;
  for (const std::string& stop : stops_) {
    const size_t at = text_.find(stop, sent_);
    if (at < first) {
      first = at;
      matched_ = stop;
    }
  }
  if (first != std::string::npos) text_.resize(first);
  const size_t end = stopped() ? text_.size() : safe_end();
  std::string out = text_.substr(sent_, end - sent_);
  sent_ = end;
  return out;
}

std::string TextStream::finish() {
  std::string out = text_.substr(sent_);
  sent_ = text_.size();
  return out;
}

}  // namespace infertune
