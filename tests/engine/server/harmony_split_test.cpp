// gpt-oss's harmony replies split into reasoning (the analysis channel) and answer (any other channel): whole texts
// against the split written out by hand, and every cut of a streamed text against the whole text's split.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/server/harmony_split.h"
#include "engine/server/reasoning_split.h"
#include "split_streaming.h"

namespace infertune {
namespace {

SplitText whole(std::string_view text) { return HarmonySplit().finish(text); }

TEST(HarmonySplit, AnalysisIsReasoningAndOtherChannelsAreTheAnswer) {
  struct Case {
    const char* text;
    const char* reasoning;
    const char* content;
  };
  const Case cases[] = {
      {"<|channel|>analysis<|message|>User asks 2+2. Answer 4.<|end|><|start|>assistant<|channel|>final<|message|>4.",
       "User asks 2+2. Answer 4.", "4."},
      {"<|channel|>final<|message|>Hello!", "", "Hello!"},  // low effort: no analysis
      {"<|channel|>analysis<|message|>cut off while thinking", "cut off while thinking", ""},
      {"<|channel|>analysis<|message|>a<|end|><|start|>assistant<|channel|>final<|message|>b<|return|>", "a", "b"},
      {"<|channel|>analysis<|message|>a<|end|><|start|>assistant<|channel|>analysis<|message|>b<|end|>"
       "<|start|>assistant<|channel|>final<|message|>c",
       "ab", "c"},
      {"<|channel|>commentary to=functions.get<|constrain|>json<|message|>{\"x\":1}<|call|>", "", "{\"x\":1}"},
      {"<|channel|>analysis<|message|>x <|en", "x <|en", ""},  // a tag cut off is text after all
      {"<|channel|>analy", "", ""},                            // cut off in the header: nothing yet
      {"Just text, no header.", "", "Just text, no header."},
      {"", "", ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    const SplitText got = whole(c.text);
    EXPECT_EQ(got.reasoning, c.reasoning);
    EXPECT_EQ(got.content, c.content);
  }
}

TEST(HarmonySplit, AnyCutOfTheStreamSplitsAsTheWholeText) {
  const std::vector<std::string> texts = {
      "<|channel|>analysis<|message|>Think <b>.<|end|><|start|>assistant<|channel|>final<|message|>Done <|.",
      "<|channel|>final<|message|>x<|end|>",
      "<|start|>assistant<|channel|>analysis<|message|>a<|end|>",
      "plain <|end|> text",
  };
  for (const std::string& text : texts) {
    SCOPED_TRACE(text);
    test::expect_every_two_cuts_split_as_whole(text, [] { return HarmonySplit(); });
  }
}

// The chat route's split: harmony's syntax when the model's template is gpt-oss, untouched text with
// reasoning_format none (as llama-server's).
TEST(HarmonySplit, ReasoningSplitUsesItForHarmonyReplies) {
  const std::string reply = "<|channel|>analysis<|message|>hm<|end|><|start|>assistant<|channel|>final<|message|>ok";
  const SplitText split = ReasoningSplit(ReasoningFormat::deepseek, ReplySyntax::harmony).finish(reply);
  EXPECT_EQ(split.reasoning, "hm");
  EXPECT_EQ(split.content, "ok");
  const SplitText raw = ReasoningSplit(ReasoningFormat::none, ReplySyntax::harmony).finish(reply);
  EXPECT_EQ(raw.reasoning, "");
  EXPECT_EQ(raw.content, reply);
}

}  // namespace
}  // namespace infertune
