#include "engine/server/reasoning_split.h"

#include "engine/server/harmony_split.h"

namespace infertune {
namespace {

constexpr std::string_view kOpen = "<think>";
constexpr std::string_view kClose = "</think>";

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

size_t leading_space(std::string_view s) {
  size_t n = 0;
  while (n < s.size() && is_space(s[n])) ++n;
  return n;
}

std::string_view trim_right(std::string_view s) {
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// The length of the longest end of `s` that begins `tag` without being all of it: a tag the next piece may complete.
size_t partial_tag_at_end(std::string_view s, std::string_view tag) {
  for (size_t k = std::min(s.size(), tag.size() - 1); k > 0; --k) {
    if (s.ends_with(tag.substr(0, k))) return k;
  }
  return 0;
}

}  // namespace

std::optional<ReasoningFormat> reasoning_format_from_name(std::string_view name) {
  if (name == "none") return ReasoningFormat::none;
  if (name == "deepseek" || name == "auto") return ReasoningFormat::deepseek;
  return std::nullopt;
}

ReasoningSplit::ReasoningSplit(ReasoningFormat format, ReplySyntax syntax)
    : state_(format == ReasoningFormat::none ? State::answer : State::opening) {
  if (format != ReasoningFormat::none && syntax == ReplySyntax::harmony) harmony_ = std::make_unique<HarmonySplit>();
}
ReasoningSplit::ReasoningSplit(ReasoningSplit&&) noexcept = default;
ReasoningSplit& ReasoningSplit::operator=(ReasoningSplit&&) noexcept = default;
ReasoningSplit::~ReasoningSplit() = default;

SplitText ReasoningSplit::push(std::string_view text) {
  if (harmony_) return harmony_->push(text);
  held_ += text;
  SplitText out;
  step(out);
  return out;
}

SplitText ReasoningSplit::finish(std::string_view last) {
  if (harmony_) return harmony_->finish(last);
  SplitText out = push(last);
  switch (state_) {
    case State::opening:  // whitespace, or the start of a <think> that never came: the answer's text
      out.content += held_;
      break;
    case State::reasoning:  // cut off inside the thought: trailing whitespace, or a tag's start that is text after all
      out.reasoning += trim_right(held_);
      break;
    case State::thinking:
    case State::after_thought:
    case State::answer:
      break;
  }
  held_.clear();
  return out;
}

void ReasoningSplit::step(SplitText& out) {
  for (;;) {
    switch (state_) {
      case State::opening: {
        const size_t space = leading_space(held_);
        const std::string_view rest = std::string_view(held_).substr(space);
        if (rest.empty()) return;
        if (rest.starts_with(kOpen)) {
          held_.erase(0, space + kOpen.size());
          state_ = State::thinking;
        } else if (kOpen.starts_with(rest)) {
          return;
        } else {
          state_ = State::answer;
        }
        break;
      }
      case State::thinking:
      case State::after_thought: {
        const size_t space = leading_space(held_);
        held_.erase(0, space);
        if (held_.empty()) return;
        state_ = state_ == State::thinking ? State::reasoning : State::answer;
        break;
      }
      case State::reasoning: {
        if (const size_t close = held_.find(kClose); close != std::string::npos) {
          out.reasoning += trim_right(std::string_view(held_).substr(0, close));
          held_.erase(0, close + kClose.size());
          state_ = State::after_thought;
          break;
        }
        // Give out all but a tag that may be starting and the whitespace before it (trimmed if the tag closes).
        size_t end = held_.size() - partial_tag_at_end(held_, kClose);
        while (end > 0 && is_space(held_[end - 1])) --end;
        out.reasoning += std::string_view(held_).substr(0, end);
        held_.erase(0, end);
        return;
      }
      case State::answer:
        out.content += held_;
        held_.clear();
        return;
    }
  }
}

}  // namespace infertune
