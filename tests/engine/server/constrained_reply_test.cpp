// The server's constrained replies: llama-server's `grammar` and `json_schema` and OpenAI's `response_format` give
// text the grammar accepts (on the fixture model, whose random weights would write anything), whole and streamed;
// the server's --grammar is the default of requests without one; bad constraints are 400s naming the field.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>

#include "engine/grammar/grammar.h"
#include "engine/grammar/grammar_matcher.h"
#include "engine/grammar/json_schema_grammar.h"
#include "engine/server/completion_request.h"
#include "server_harness.h"

namespace infertune {
namespace {

using json = nlohmann::json;

constexpr const char* kPrompt = "Once upon a time";
// Bounded words: the fixture's random weights would write letters forever where the grammar lets them.
constexpr const char* kWords = "root ::= \" \" [a-z]{1,5} (\" \" [a-z]{1,5}){2} \".\"\n";

bool accepts(std::string_view gbnf, const std::string& text) {
  auto grammar = Grammar::parse(gbnf);
  EXPECT_TRUE(grammar) << grammar.error().message;
  return grammar && grammar_accepts(*grammar, text);
}

TEST(ConstrainedReply, AGrammarShapesTheCompletionWholeAndStreamed) {
  test::ServerHarness h;
  h.ready();
  const json request = {{"prompt", kPrompt}, {"n_predict", 48}, {"temperature", 0}, {"grammar", kWords}};
  const json whole = test::post_json(h, "/completion", request);
  const std::string content = whole["content"].get<std::string>();
  EXPECT_TRUE(accepts(kWords, content)) << content;
  EXPECT_EQ(whole["stop_type"], "eos") << content;

  json streamed = request;
  streamed["stream"] = true;
  auto events = h.client().Post("/completion", streamed.dump(), "application/json");
  ASSERT_TRUE(events);
  std::string joined;
  for (size_t at = 0; (at = events->body.find("data: ", at)) != std::string::npos;) {
    const size_t end = events->body.find("\n\n", at);
    joined += json::parse(events->body.substr(at + 6, end - at - 6))["content"].get<std::string>();
    at = end;
  }
  EXPECT_EQ(joined, content);
}

TEST(ConstrainedReply, AJsonSchemaGivesAnObjectWithItsPropertiesInOrder) {
  test::ServerHarness h;
  h.ready();
  // Properties listed out of alphabetical order: the reply keeps the schema's order.
  const std::string body = R"({"prompt": "Once upon a time", "n_predict": 120, "temperature": 0,
    "json_schema": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 6},
                    "age": {"type": "integer", "minimum": 0, "maximum": 150}, "tags": {"type": "array", "items": {"enum": ["a", "b"]},
                    "maxItems": 2}}, "required": ["name", "age", "tags"]}})";
  auto reply = h.client().Post("/completion", body, "application/json");
  ASSERT_TRUE(reply);
  ASSERT_EQ(reply->status, 200) << reply->body;
  const std::string content = json::parse(reply->body)["content"].get<std::string>();
  const json value = json::parse(content, nullptr, false);
  ASSERT_TRUE(value.is_object()) << content;
  EXPECT_TRUE(value["name"].is_string() && value["name"].get<std::string>().size() <= 6) << content;
  EXPECT_TRUE(value["age"].is_number_integer()) << content;
  EXPECT_TRUE(value["tags"].is_array() && value["tags"].size() <= 2) << content;
  EXPECT_LT(content.find("\"name\""), content.find("\"age\"")) << content;
  EXPECT_LT(content.find("\"age\""), content.find("\"tags\"")) << content;
}

TEST(ConstrainedReply, ResponseFormatOnTheChatEndpoint) {
  test::ServerHarness h;
  h.ready();
  const json messages = json::array({{{"role", "user"}, {"content", "Describe a cat."}}});
  const json object = test::post_json(
      h, "/v1/chat/completions",
      {{"messages", messages}, {"max_tokens", 80}, {"temperature", 0}, {"response_format", {{"type", "json_object"}}}});
  // Any object: the random weights may write a string until max_tokens; then the text is an object's beginning.
  const std::string text = object["choices"][0]["message"]["content"].get<std::string>();
  if (object["choices"][0]["finish_reason"] == "stop") {
    EXPECT_TRUE(json::parse(text, nullptr, false).is_object()) << text;
  } else {
    auto any_object = Grammar::parse(json_object_gbnf());
    ASSERT_TRUE(any_object);
    EXPECT_TRUE(GrammarMatcher(std::make_shared<const Grammar>(std::move(*any_object))).allows(text)) << text;
    EXPECT_EQ(text.substr(0, 1), "{") << text;
  }

  const json schema = {{"type", "object"}, {"properties", {{"ok", {{"type", "boolean"}}}}}, {"required", {"ok"}}};
  const json typed = test::post_json(
      h, "/v1/chat/completions",
      {{"messages", messages},
       {"max_tokens", 40},
       {"temperature", 0},
       {"response_format", {{"type", "json_schema"}, {"json_schema", {{"name", "x"}, {"schema", schema}}}}}});
  const json value = json::parse(typed["choices"][0]["message"]["content"].get<std::string>(), nullptr, false);
  EXPECT_TRUE(value.is_object() && value["ok"].is_boolean()) << typed.dump();
  EXPECT_EQ(typed["choices"][0]["finish_reason"], "stop");
}

TEST(ConstrainedReply, BadConstraintsAreRefusedNamingTheField) {
  test::ServerHarness h;
  h.ready();
  auto error_of = [&](const json& extra) {
    json body = {{"prompt", kPrompt}, {"n_predict", 4}};
    body.update(extra);
    return test::post_json(h, "/v1/completions", body, 400)["error"]["message"].get<std::string>();
  };
  EXPECT_EQ(error_of({{"grammar", "root ::= \"a"}}),
            "grammar line 1, column 12: the literal opened at column 10 is not closed");
  EXPECT_EQ(error_of({{"grammar", 5}}), "grammar must be a string of GBNF rules, got 5");
  EXPECT_EQ(error_of({{"grammar", "root ::= \"a\""}, {"json_schema", {{"type", "object"}}}}),
            "grammar and json_schema cannot both be given: each constrains the reply on its own");
  EXPECT_NE(error_of({{"json_schema", {{"type", "integer"}, {"multipleOf", 3}}}}).find("multipleOf"),
            std::string::npos);
  EXPECT_EQ(error_of({{"response_format", {{"type", "yaml"}}}}),
            "response_format.type must be \"text\", \"json_object\" or \"json_schema\", got \"yaml\"");
  EXPECT_EQ(error_of({{"response_format", {{"type", "json_schema"}}}}),
            "response_format {\"type\": \"json_schema\"} needs json_schema.schema (the JSON Schema)");
}

TEST(ConstrainedReply, TheServersGrammarIsTheDefaultOfRequestsWithoutOne) {
  auto grammar = Grammar::parse("root ::= \"x\"\n");
  ASSERT_TRUE(grammar);
  RequestLimits limits{.n_ctx = 64, .n_vocab = 512};
  limits.grammar = std::make_shared<const Grammar>(std::move(*grammar));
  auto plain = parse_completion_request({{"prompt", "a"}}, Endpoint::completions, limits);
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->grammar, limits.grammar);
  auto own = parse_completion_request({{"prompt", "a"}, {"grammar", "root ::= \"y\""}}, Endpoint::completions, limits);
  ASSERT_TRUE(own);
  ASSERT_TRUE(own->grammar);
  EXPECT_NE(own->grammar, limits.grammar);
  EXPECT_TRUE(grammar_accepts(*own->grammar, "y"));
}

}  // namespace
}  // namespace infertune
