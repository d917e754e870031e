#pragma once
// A chat reply's reasoning apart from its answer, as llama-server's --reasoning-format deepseek (its default, auto)
// gives them: a reply that opens with <think> (after optional whitespace) has the text up to </think> as
// message.reasoning_content and the rest as message.content; streamed, as delta.reasoning_content and
// delta.content. Reasoning models (Qwen3, DeepSeek-R1 and its distills, QwQ) write their thoughts so. The
// reasoning is trimmed of surrounding whitespace and the answer of leading whitespace; a reply cut off before
// </think> is reasoning only; a reply that does not open with <think> is all answer.
//
//   ReasoningSplit split(ReasoningFormat::deepseek);
//   for (piece : stream) { SplitText t = split.push(piece); send(t.reasoning, t.content); }
//   SplitText rest = split.finish(last_piece);   // a whole reply: split.finish(text)
//
// push() holds back what may still turn out to be a tag or whitespace to trim (at most a few bytes), so the
// streamed pieces concatenate to what the whole text splits into.
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace infertune {

enum class ReasoningFormat { none, deepseek };

// llama-server's names: "none", "deepseek", "auto" (deepseek). Empty for any other.
std::optional<ReasoningFormat> reasoning_format_from_name(std::string_view name);
inline constexpr std::string_view kReasoningFormatNames = "none, deepseek, auto";

struct SplitText {
  std::string reasoning;
  std::string content;
};

// How a model marks its reasoning: <think>...</think> (Qwen3, DeepSeek-R1), or gpt-oss's harmony channels
// (harmony_split.h).
enum class ReplySyntax { think_tags, harmony };

class HarmonySplit;

class ReasoningSplit {
 public:
  explicit ReasoningSplit(ReasoningFormat format = ReasoningFormat::none, ReplySyntax syntax = ReplySyntax::think_tags);
  ReasoningSplit(ReasoningSplit&&) noexcept;
  ReasoningSplit& operator=(ReasoningSplit&&) noexcept;
  ~ReasoningSplit();

  SplitText push(std::string_view text);
  // The reply's last piece and what was held back.
  SplitText finish(std::string_view last = {});

 private:
  enum class State {
    opening,        // before the first non-whitespace: it may be <think>
    thinking,       // inside <think>, before its first non-whitespace
    reasoning,      // inside <think>
    after_thought,  // after </think>, before the answer's first non-whitespace
    answer,
  };
  void step(SplitText& out);

  State state_;
  std::string held_;                       // text not yet given out: a possible tag, or whitespace that may be trimmed
  std::unique_ptr<HarmonySplit> harmony_;  // set: the reply is in harmony's syntax, split there
};

}  // namespace infertune
