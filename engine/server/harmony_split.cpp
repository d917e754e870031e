#include "engine/server/harmony_split.h"

#include <array>

namespace infertune {
namespace {

constexpr std::string_view kStart = "<|start|>";
constexpr std::string_view kChannel = "<|channel|>";
constexpr std::string_view kMessage = "<|message|>";
// What ends a message's body: <|end|>, or the end-of-generation tokens when the client's output shows them.
constexpr std::array<std::string_view, 3> kBodyEnds = {"<|end|>", "<|return|>", "<|call|>"};

// The channel a header names: "analysis" of "<|start|>assistant<|channel|>analysis" (up to a space or a tag).
std::string_view header_channel(std::string_view header) {
  const size_t at = header.find(kChannel);
  if (at == std::string_view::npos) return {};
  std::string_view channel = header.substr(at + kChannel.size());
  return channel.substr(0, channel.find_first_of(" <"));
}

// The first end tag in `text`: its position and length (npos when none).
std::pair<size_t, size_t> find_body_end(std::string_view text) {
  std::pair<size_t, size_t> first{std::string_view::npos, 0};
  for (std::string_view tag : kBodyEnds) {
    const size_t at = text.find(tag);
    if (at < first.first) first = {at, tag.size()};
  }
  return first;
}

// The length of the longest end of `s` that begins one of the end tags without being all of it.
size_t partial_end_tag(std::string_view s) {
  size_t longest = 0;
  for (std::string_view tag : kBodyEnds) {
    for (size_t k = std::min(s.size(), tag.size() - 1); k > longest; --k) {
      if (s.ends_with(tag.substr(0, k))) {
        longest = k;
        break;
      }
    }
  }
  return longest;
}

// Whether `text` is, or may still become, a message header: it opens with <|start|> or <|channel|>.
bool may_be_header(std::string_view text) {
  for (std::string_view opener : {kStart, kChannel}) {
    if (text.starts_with(opener) || opener.starts_with(text)) return true;
  }
  return false;
}

}  // namespace

SplitText HarmonySplit::push(std::string_view text) {
  held_ += text;
  SplitText out;
  step(out);
  return out;
}

SplitText HarmonySplit::finish(std::string_view last) {
  SplitText out = push(last);
  // Cut off in a header, or a body's last bytes that looked like the start of a tag: text after all, unless it is
  // a header's beginning.
  if (state_ == State::header && !may_be_header(held_)) out.content += held_;
  if (state_ != State::header) give_body(out, held_);
  held_.clear();
  return out;
}

void HarmonySplit::give_body(SplitText& out, std::string_view text) const {
  (state_ == State::reasoning ? out.reasoning : out.content) += text;
}

void HarmonySplit::step(SplitText& out) {
  for (;;) {
    switch (state_) {
      case State::header: {
        if (held_.empty()) return;
        if (first_header_ && !may_be_header(held_)) {
          state_ = State::plain;
          break;
        }
        const size_t message = held_.find(kMessage);
        if (message == std::string::npos) return;  // the header is still arriving
        state_ =
            header_channel(std::string_view(held_).substr(0, message)) == "analysis" ? State::reasoning : State::answer;
        first_header_ = false;
        held_.erase(0, message + kMessage.size());
        break;
      }
      case State::reasoning:
      case State::answer: {
        const auto [end, length] = find_body_end(held_);
        if (end != std::string::npos) {
          give_body(out, std::string_view(held_).substr(0, end));
          held_.erase(0, end + length);
          state_ = State::header;
          break;
        }
        const size_t keep = partial_end_tag(held_);
        give_body(out, std::string_view(held_).substr(0, held_.size() - keep));
        held_.erase(0, held_.size() - keep);
        return;
      }
      case State::plain:
        out.content += held_;
        held_.clear();
        return;
    }
  }
}

}  // namespace infertune
