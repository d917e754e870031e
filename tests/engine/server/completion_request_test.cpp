// parse_completion_request (engine/server/completion_request.h) and parse_request_body (json_fields.h) on the
// bodies tests/fuzz/completion_request_fuzz found mishandled: a number beyond a double, integers beyond int64,
// a content part whose type is not a string, and values nested deep enough to overflow the stack when
// copied or dumped into an error (refused by the body's depth bound, and harmless past it). Each is the
// client's error (400), never an exception or a crash. And llama.cpp's cache_prompt and return_tokens.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>
#include <string>

#include "engine/server/completion_request.h"
#include "engine/server/completion_route.h"
#include "engine/server/json_fields.h"

namespace infertune {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

const RequestLimits kLimits = {.n_ctx = 4096, .n_vocab = 32000};

Result<CompletionRequest> parse(const std::string& body, Endpoint endpoint = Endpoint::completions) {
  return parse_completion_request(json::parse(body), endpoint, kLimits);
}

TEST(CompletionRequest, ANumberBeyondADoubleIsNotValidJson) {
  httplib::Request req;
  req.body = R"({"prompt":"a","temperature":1e400})";  // json::parse throws out_of_range, not parse_error
  auto body = json_body(req);
  ASSERT_FALSE(body.ok());
  EXPECT_THAT(body.error().message, HasSubstr("not valid JSON"));
}

TEST(CompletionRequest, IntegersBeyondInt64AreRefusedNotWrapped) {
  auto unsigned_seed = parse(R"({"prompt":"a","seed":9223372036854775808})");
  ASSERT_FALSE(unsigned_seed.ok());
  EXPECT_THAT(unsigned_seed.error().message, HasSubstr("seed"));
  EXPECT_FALSE(parse(R"({"prompt":"a","seed":9223372036854775808.0})").ok());  // casting it was undefined
  EXPECT_FALSE(parse(R"({"prompt":"a","max_tokens":18446744073709551615})").ok());
  auto largest = parse(R"({"prompt":"a","seed":9223372036854775807})");
  ASSERT_TRUE(largest.ok()) << largest.error().message;
  EXPECT_EQ(largest->sampling.seed, static_cast<uint64_t>(std::numeric_limits<int64_t>::max()));
  auto whole_float = parse(R"({"prompt":"a","max_tokens":8.0})");
  ASSERT_TRUE(whole_float.ok()) << whole_float.error().message;
  EXPECT_EQ(whole_float->max_tokens, 8u);
}

TEST(CompletionRequest, LlamaCppsCachePromptAndReturnTokens) {
  auto defaults = parse(R"({"prompt":"a"})");
  ASSERT_TRUE(defaults.ok());
  EXPECT_TRUE(defaults->cache_prompt);
  EXPECT_FALSE(defaults->return_tokens);
  auto given = parse(R"({"prompt":"a","cache_prompt":false,"return_tokens":true})", Endpoint::native);
  ASSERT_TRUE(given.ok()) << given.error().message;
  EXPECT_FALSE(given->cache_prompt);
  EXPECT_TRUE(given->return_tokens);
  for (const char* field : {"cache_prompt", "return_tokens"}) {
    auto wrong = parse(std::string(R"({"prompt":"a",")") + field + R"(":"no"})");
    ASSERT_FALSE(wrong.ok()) << field;
    EXPECT_THAT(wrong.error().message, HasSubstr(field));
  }
}

TEST(CompletionRequest, AContentPartWhoseTypeIsNotAStringIsRefused) {
  for (const char* part : {R"({"type":1,"text":"x"})", R"({"type":null,"text":"x"})", R"({"type":["text"]})"}) {
    auto r = parse(std::string(R"({"messages":[{"role":"user","content":[)") + part + "]}]}", Endpoint::chat);
    ASSERT_FALSE(r.ok()) << part;
    EXPECT_THAT(r.error().message, HasSubstr("messages[0].content")) << part;
  }
}

TEST(CompletionRequest, ABodyNestedPastTheBoundIsRefusedAtParse) {
  const auto nested = [](int depth) {
    return R"({"prompt":"a","x":)" + std::string(depth - 1, '[') + std::string(depth - 1, ']') + "}";
  };
  EXPECT_TRUE(parse_request_body(nested(kMaxJsonDepth + 1)).ok());  // the object is level 0
  auto deeper = parse_request_body(nested(kMaxJsonDepth + 2));
  ASSERT_FALSE(deeper.ok());
  EXPECT_THAT(deeper.error().message, HasSubstr("deeper than 64 levels"));
  EXPECT_FALSE(parse_request_body(std::string(1'000'000, '{')).ok());
  EXPECT_THAT(parse_request_body("[1]").error().message, HasSubstr("must be a JSON object"));
}

// Below the body's bound too (a caller that parses JSON itself): nothing recurses per level.
TEST(CompletionRequest, DeeplyNestedValuesAreRefusedWithoutRecursion) {
  // 2 MB of brackets (the server takes 8 MiB bodies); 100000 levels crashed a release build.
  const std::string nested = std::string(1'000'000, '[') + std::string(1'000'000, ']');
  for (const std::string& body :
       {R"({"prompt":"a","temperature":)" + nested + "}", R"({"prompt":)" + nested + "}",
        R"({"prompt":"a","stop":[)" + nested + "]}", R"({"prompt":"a","stream":)" + nested + "}"}) {
    auto r = parse(body);
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(r.error().message, HasSubstr("an array"));
  }
  auto chat = parse(R"({"messages":[{"role":"user","content":)" + nested + "}]}", Endpoint::chat);
  ASSERT_FALSE(chat.ok());
  EXPECT_THAT(chat.error().message, HasSubstr("messages[0].content"));
}

}  // namespace
}  // namespace infertune
