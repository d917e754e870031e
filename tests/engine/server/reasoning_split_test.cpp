// A chat reply's <think> part apart from its answer (llama-server's --reasoning-format deepseek): the split of whole
// texts, the same split from any cut of the text into streamed pieces, and the server's replies, whole and streamed,
// on the fixture model made to think by a grammar.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "engine/server/completion_request.h"
#include "engine/server/reasoning_split.h"
#include "server_harness.h"
#include "split_streaming.h"

namespace infertune {
namespace {

using json = nlohmann::json;

SplitText whole(std::string_view text, ReasoningFormat format = ReasoningFormat::deepseek) {
  return ReasoningSplit(format).finish(text);
}

// The text streamed in pieces cut at `cuts` (ascending offsets), the pieces' parts joined.
SplitText streamed(std::string_view text, const std::vector<size_t>& cuts) {
  return test::streamed(ReasoningSplit(ReasoningFormat::deepseek), text, cuts);
}

TEST(ReasoningSplit, ThoughtAndAnswerOfWholeTexts) {
  struct Case {
    const char* text;
    const char* reasoning;
    const char* content;
  };
  const Case cases[] = {
      {"<think>\nLet me see.\n</think>\n\nParis.", "Let me see.", "Paris."},
      {"  \n<think>a\n\n b</think>c </think> d", "a\n\n b", "c </think> d"},  // a later tag is the answer's text
      {"<think>\n\n</think>\n\nHi", "", "Hi"},                                // Qwen3 without thinking
      {"<think> cut off in the thought  ", "cut off in the thought", ""},
      {"<think>a </th", "a </th", ""},                               // cut inside the closing tag: text after all
      {"  Hello <think>x</think>", "", "  Hello <think>x</think>"},  // no opening tag first: all answer, as written
      {"<thinking>x", "", "<thinking>x"},
      {"<thi", "", "<thi"},
      {" \n", "", " \n"},
      {"", "", ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    const SplitText got = whole(c.text);
    EXPECT_EQ(got.reasoning, c.reasoning);
    EXPECT_EQ(got.content, c.content);
  }
  const SplitText kept = whole("<think>x</think>y", ReasoningFormat::none);
  EXPECT_EQ(kept.reasoning, "");
  EXPECT_EQ(kept.content, "<think>x</think>y");
}

TEST(ReasoningSplit, AnyCutOfTheStreamSplitsAsTheWholeText) {
  const std::vector<std::string> texts = {"<think>\nLet me see: 2 + 2.\n</think>\n\nIt is 4.",
                                          " <think>a  <b>  </think>  c <",
                                          "<think>x </thin",
                                          "<thinker> no",
                                          "\n\n<think></think>answer",
                                          "<think>\n  \n</think>",
                                          "plain text </think>"};
  for (const std::string& text : texts) {
    SCOPED_TRACE(text);
    test::expect_every_two_cuts_split_as_whole(text, [] { return ReasoningSplit(ReasoningFormat::deepseek); });
    const SplitText want = whole(text);
    std::vector<size_t> every_byte;
    for (size_t i = 1; i < text.size(); ++i) every_byte.push_back(i);
    const SplitText bytes = streamed(text, every_byte);
    EXPECT_EQ(bytes.reasoning, want.reasoning);
    EXPECT_EQ(bytes.content, want.content);
  }
}

TEST(ReasoningSplit, RequestsNameTheirFormatOrTakeTheServers) {
  RequestLimits limits{.n_ctx = 64, .n_vocab = 512};
  const json messages = json::array({{{"role", "user"}, {"content", "hi"}}});
  auto plain = parse_completion_request({{"messages", messages}}, Endpoint::chat, limits);
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->reasoning_format, ReasoningFormat::deepseek);
  limits.reasoning_format = ReasoningFormat::none;
  EXPECT_EQ(parse_completion_request({{"messages", messages}}, Endpoint::chat, limits)->reasoning_format,
            ReasoningFormat::none);
  auto asked = parse_completion_request({{"messages", messages}, {"reasoning_format", "auto"}}, Endpoint::chat, limits);
  ASSERT_TRUE(asked);
  EXPECT_EQ(asked->reasoning_format, ReasoningFormat::deepseek);
  auto bad = parse_completion_request({{"messages", messages}, {"reasoning_format", "deepseek-legacy"}}, Endpoint::chat,
                                      limits);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "reasoning_format must be one of none, deepseek, auto, not \"deepseek-legacy\"");
}

TEST(ReasoningSplit, ChatTemplateKwargsSwitchThinkingOffOrAreRefusedNamingTheField) {
  RequestLimits limits{.n_ctx = 64, .n_vocab = 512};
  const json messages = json::array({{{"role", "user"}, {"content", "hi"}}});
  auto request = [&](const json& kwargs) {
    json body = {{"messages", messages}};
    if (!kwargs.is_discarded()) body["chat_template_kwargs"] = kwargs;
    return parse_completion_request(body, Endpoint::chat, limits);
  };
  const auto thinking = [&](const json& kwargs) { return request(kwargs)->template_options.enable_thinking; };
  EXPECT_TRUE(thinking(json(json::value_t::discarded)));
  EXPECT_FALSE(thinking({{"enable_thinking", false}}));
  EXPECT_TRUE(thinking({{"other", 1}}));            // left to templates that read it
  limits.template_options.enable_thinking = false;  // the server's --chat-template-kwargs
  EXPECT_FALSE(thinking(json(json::value_t::discarded)));
  EXPECT_TRUE(thinking({{"enable_thinking", true}}));
  EXPECT_EQ(request({{"enable_thinking", "no"}}).error().message,
            "chat_template_kwargs.enable_thinking must be true or false, not \"no\"");
  // gpt-oss's reasoning effort, from chat_template_kwargs or OpenAI's top-level field.
  EXPECT_EQ(request({{"reasoning_effort", "high"}})->template_options.reasoning_effort, "high");
  EXPECT_EQ(request(json(json::value_t::discarded))->template_options.reasoning_effort, "medium");
  auto top_level =
      parse_completion_request({{"messages", messages}, {"reasoning_effort", "low"}}, Endpoint::chat, limits);
  ASSERT_TRUE(top_level);
  EXPECT_EQ(top_level->template_options.reasoning_effort, "low");
  EXPECT_EQ(request({{"reasoning_effort", "max"}}).error().message,
            "chat_template_kwargs.reasoning_effort must be low, medium or high, not \"max\"");
  EXPECT_EQ(request(json::array({1})).error().message, "chat_template_kwargs must be an object, not an array");
}

// The fixture model thinks when a grammar makes it: "<think>" words "</think>" words.
constexpr const char* kThinking =
    "root ::= \"<think>\" (\" \" [a-z]{1,4}){2} \"</think>\" (\" \" [a-z]{1,4}){2} \".\"\n";

json thinking_request(bool stream) {
  return {{"messages", json::array({{{"role", "user"}, {"content", "Think, then answer."}}})},
          {"max_tokens", 64},
          {"temperature", 0},
          {"grammar", kThinking},
          {"stream", stream}};
}

TEST(ReasoningSplit, TheChatReplyCarriesReasoningContentWholeAndStreamed) {
  test::ServerHarness h;
  h.ready();
  const json reply = test::post_json(h, "/v1/chat/completions", thinking_request(false));
  const json& message = reply["choices"][0]["message"];
  ASSERT_TRUE(message.contains("reasoning_content")) << reply.dump();
  const std::string reasoning = message["reasoning_content"].get<std::string>();
  const std::string content = message["content"].get<std::string>();
  EXPECT_EQ(reasoning.find("<think>"), std::string::npos) << reasoning;
  EXPECT_EQ(std::count(reasoning.begin(), reasoning.end(), ' '), 1) << reasoning;  // two words, trimmed
  EXPECT_EQ(content.back(), '.') << content;
  EXPECT_NE(content.front(), ' ') << content;

  auto events = h.client().Post("/v1/chat/completions", thinking_request(true).dump(), "application/json");
  ASSERT_TRUE(events);
  std::string streamed_reasoning, streamed_content;
  for (size_t at = 0; (at = events->body.find("data: {", at)) != std::string::npos;) {
    const size_t end = events->body.find("\n\n", at);
    const json delta = json::parse(events->body.substr(at + 6, end - at - 6))["choices"][0]["delta"];
    if (delta.contains("reasoning_content")) streamed_reasoning += delta["reasoning_content"].get<std::string>();
    if (delta.contains("content")) streamed_content += delta["content"].get<std::string>();
    at = end;
  }
  EXPECT_EQ(streamed_reasoning, reasoning);
  EXPECT_EQ(streamed_content, content);

  json kept = thinking_request(false);
  kept["reasoning_format"] = "none";
  const json whole_text = test::post_json(h, "/v1/chat/completions", kept)["choices"][0]["message"];
  EXPECT_FALSE(whole_text.contains("reasoning_content"));
  EXPECT_EQ(whole_text["content"].get<std::string>().rfind("<think>", 0), 0u) << whole_text.dump();
}

}  // namespace
}  // namespace infertune
