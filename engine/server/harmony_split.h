#pragma once
// A gpt-oss reply's reasoning apart from its answer. The harmony format writes a reply as messages on channels:
//   <|channel|>analysis<|message|>{reasoning}<|end|><|start|>assistant<|channel|>final<|message|>{answer}
// (the first header's "<|start|>assistant" is the prompt's). Text on the analysis channel is reasoning_content; on
// any other channel (final, commentary) it is content; the headers and <|end|> are neither. A reply that does not
// open with a header is all answer. Streamed as ReasoningSplit (reasoning_split.h), with the same guarantee: the
// pieces concatenate to what the whole text splits into, a possible tag being held back a few bytes.
#include <string>
#include <string_view>

#include "engine/server/reasoning_split.h"

namespace infertune {

class HarmonySplit {
 public:
  SplitText push(std::string_view text);
  SplitText finish(std::string_view last = {});

 private:
  enum class State {
    header,     // before a message's <|message|>: its header names the channel
    reasoning,  // the body of an analysis message
    answer,     // the body of any other message
    plain,      // the reply opened with no header: everything is answer
  };
  void step(SplitText& out);
  void give_body(SplitText& out, std::string_view text) const;

  State state_ = State::header;
  bool first_header_ = true;  // the reply's first header: what is not a header there means a plain reply
  std::string held_;
};

}  // namespace infertune
