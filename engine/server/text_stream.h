#pragma once
// Generated tokens -> the text a client is sent, a piece at a time. Bytes are held back while they end in an
// incomplete UTF-8 character (a token may carry part of one) or could be the start of a stop string; when a
// stop string appears, the text before it is the last sent and the stream is over (the stop string itself is
// not sent, as in the OpenAI API).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace infertune {

// The bytes at the end of `text` that begin a UTF-8 character whose continuation bytes have not arrived.
size_t incomplete_utf8_tail(std::string_view text);

class TextStream {
 public:
  explicit TextStream(std::vector<std::string> stops = {});

  // Appends a token's bytes; returns the text that can be sent now ("" while held back or after a stop).
  std::string push(std::string_view piece);
  // The end of generation: whatever was held back (a partial character included; JSON output replaces it).
  std::string finish();

  bool stopped() const { return matched_.has_value(); }
  // Whether the bytes held back end in a character whose continuation bytes have not arrived.
  bool holds_partial_character() const { return incomplete_utf8_tail(std::string_view(text_).substr(sent_)) > 0; }
  const std::optional<std::string>& matched_stop() const { return matched_; }
  // Every byte sent so far.
  std::string_view sent() const { return std::string_view(text_).substr(0, sent_); }

 private:
  size_t safe_end() const;  // where the text that can be sent now ends

  std::vector<std::string> stops_;
  std::string text_;  // all bytes pushed (up to the stop string, once one matched)
  size_t sent_ = 0;
  std::optional<std::string> matched_;
};

}  // namespace infertune
