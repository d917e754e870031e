// A completions request with several prompts (an array of strings or of id arrays), as OpenAI's /v1/completions
// and llama-server's /completion take it: parsed with each prompt named in errors, and answered with a completion
// per prompt in prompt order, each the greedy continuation of its prompt decoded alone (OpenAI: choices with their
// index and the usage summed; /completion: an array of its objects), or streamed with each event naming its prompt;
// and OpenAI's n, several completions of each prompt.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "engine/server/completion_request.h"
#include "server_harness.h"

namespace infertune {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

const RequestLimits kLimits = {.n_ctx = 4096, .n_vocab = 32000};

Result<CompletionRequest> parse(const json& body) {
  return parse_completion_request(body, Endpoint::completions, kLimits);
}

TEST(SeveralPrompts, AreParsedInOrderWithEachNamedInErrors) {
  auto r = parse({{"prompt", {"Once", {1, 2, 3}, "upon"}}});
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->prompts.size(), 3u);
  EXPECT_EQ(r->prompts[0].text, "Once");
  EXPECT_EQ(r->prompts[1].tokens, (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(r->prompts[2].text, "upon");

  auto ids = parse({{"prompt", {5, 6}}});  // one prompt of ids, not two prompts
  ASSERT_TRUE(ids.ok());
  ASSERT_EQ(ids->prompts.size(), 1u);
  EXPECT_EQ(ids->prompts[0].tokens, (std::vector<int32_t>{5, 6}));

  EXPECT_THAT(parse({{"prompt", {"a", 5}}}).error().message, HasSubstr("prompt[1] must be a string or an array"));
  EXPECT_THAT(parse({{"prompt", {"a", ""}}}).error().message, HasSubstr("prompt[1] must not be empty"));
  EXPECT_THAT(parse({{"prompt", {"a", {1, 99999}}}}).error().message, HasSubstr("prompt[1][1] must be a token id"));
  EXPECT_THAT(parse({{"prompt", json::array()}}).error().message, HasSubstr("prompt must be a string"));
  EXPECT_THAT(parse({{"prompt", std::vector<std::string>(kMaxPrompts + 1, "a")}}).error().message,
              HasSubstr("at most 64 prompts"));
}

json post(const test::ServerHarness& h, const std::string& path, const json& body, int status = 200) {
  auto res = h.client().Post(path, body.dump(), "application/json");
  EXPECT_TRUE(res) << path;
  if (!res) return json();
  EXPECT_EQ(res->status, status) << path << ": " << res->body;
  return json::parse(res->body, nullptr, false);
}

TEST(SeveralPrompts, GetACompletionEachInPromptOrder) {
  test::ServerHarness h;
  h.ready();
  const std::vector<std::string> texts = {"Once upon a time", "The sky is", "Once upon a time there was"};
  std::vector<std::vector<int32_t>> prompts;
  for (const std::string& t : texts) prompts.push_back(h.tokenizer().encode(t, true, true));
  prompts.push_back({1, 300, 301, 302});  // as ids
  json body_prompts = json::array();
  for (const std::string& t : texts) body_prompts.push_back(t);
  body_prompts.push_back(prompts.back());

  const json openai = post(h, "/v1/completions", {{"prompt", body_prompts}, {"max_tokens", 6}, {"temperature", 0}});
  ASSERT_EQ(openai["choices"].size(), prompts.size());
  size_t prompt_tokens = 0;
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(openai["choices"][i]["index"], i);
    EXPECT_EQ(openai["choices"][i]["text"], h.text_of(test::greedy_alone(h.model(), prompts[i], 6))) << i;
    prompt_tokens += prompts[i].size();
  }
  EXPECT_EQ(openai["usage"]["prompt_tokens"], prompt_tokens);
  EXPECT_EQ(openai["usage"]["completion_tokens"], 6 * prompts.size());

  const json native = post(h, "/completion", {{"prompt", body_prompts}, {"n_predict", 6}, {"temperature", 0}});
  ASSERT_TRUE(native.is_array());
  ASSERT_EQ(native.size(), prompts.size());
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(native[i]["index"], i);
    EXPECT_EQ(native[i]["content"], h.text_of(test::greedy_alone(h.model(), prompts[i], 6))) << i;
    EXPECT_EQ(native[i]["tokens_evaluated"], prompts[i].size()) << i;
  }

  const json too_long =
      post(h, "/v1/completions", {{"prompt", {"a", std::vector<int32_t>(300, 5)}}, {"max_tokens", 1}}, 400);
  EXPECT_THAT(too_long["error"]["message"].get<std::string>(), HasSubstr("prompt[1] has 300 tokens"));
}

// OpenAI's n: n completions of each prompt, prompt i's choice j at index i * n + j, the prompts' tokens counted once
// in the usage. A given seed moves by j for choice j, so that each choice is the reply of a request of its own with
// that seed.
TEST(SeveralPrompts, NChoicesOfEachPrompt) {
  test::ServerHarness h;
  h.ready();
  const std::vector<std::string> texts = {"Once upon a time", "The sky is"};
  size_t prompt_tokens = 0;
  std::vector<std::string> greedy;
  for (const std::string& t : texts) {
    const std::vector<int32_t> prompt = h.tokenizer().encode(t, true, true);
    greedy.push_back(h.text_of(test::greedy_alone(h.model(), prompt, 5)));
    prompt_tokens += prompt.size();
  }
  const json plain = post(h, "/v1/completions", {{"prompt", texts}, {"n", 3}, {"max_tokens", 5}, {"temperature", 0}});
  ASSERT_EQ(plain["choices"].size(), 6u);
  for (size_t k = 0; k < 6; ++k) {
    EXPECT_EQ(plain["choices"][k]["index"], k);
    EXPECT_EQ(plain["choices"][k]["text"], greedy[k / 3]) << k;
  }
  EXPECT_EQ(plain["usage"]["prompt_tokens"], prompt_tokens) << "each prompt counts once";
  EXPECT_EQ(plain["usage"]["completion_tokens"], 30);

  const json sampled = {{"prompt", texts[0]}, {"n", 2}, {"max_tokens", 8}, {"temperature", 1.0}, {"seed", 41}};
  const json both = post(h, "/v1/completions", sampled);
  ASSERT_EQ(both["choices"].size(), 2u);
  for (int j = 0; j < 2; ++j) {
    const json alone =
        post(h, "/v1/completions", {{"prompt", texts[0]}, {"max_tokens", 8}, {"temperature", 1.0}, {"seed", 41 + j}});
    EXPECT_EQ(both["choices"][j]["text"], alone["choices"][0]["text"]) << "choice " << j;
  }
}

// The data: events of a streamed reply, parsed ([DONE] left out), and whether it ended with [DONE].
std::pair<std::vector<json>, bool> events_of(const std::string& body) {
  std::vector<json> events;
  bool done = false;
  for (size_t at = 0; (at = body.find("data: ", at)) != std::string::npos;) {
    const size_t end = body.find("\n\n", at);
    const std::string data = body.substr(at + 6, end - at - 6);
    if (data == "[DONE]") {
      done = true;
    } else {
      events.push_back(json::parse(data));
    }
    at = end;
  }
  return {events, done};
}

// Streamed, the prompts' tokens interleave as they come; each event names its prompt by index, each prompt ends
// with its own last chunk (OpenAI: finish_reason; /completion: its final object), and the usage is summed.
TEST(SeveralPrompts, StreamedEachEventNamesItsPrompt) {
  test::ServerHarness h;
  h.ready();
  const std::vector<std::string> texts = {"Once upon a time", "The sky is", "Once upon a time there was"};
  std::vector<std::string> greedy;
  size_t prompt_tokens = 0;
  for (const std::string& t : texts) {
    const std::vector<int32_t> prompt = h.tokenizer().encode(t, true, true);
    greedy.push_back(h.text_of(test::greedy_alone(h.model(), prompt, 8)));
    prompt_tokens += prompt.size();
  }
  const json body = {{"prompt", texts},
                     {"max_tokens", 8},
                     {"temperature", 0},
                     {"stream", true},
                     {"stream_options", {{"include_usage", true}}}};

  auto openai = h.client().Post("/v1/completions", body.dump(), "application/json");
  ASSERT_TRUE(openai);
  ASSERT_EQ(openai->status, 200) << openai->body;
  const auto [chunks, done] = events_of(openai->body);
  EXPECT_TRUE(done);
  std::vector<std::string> joined(texts.size());
  std::vector<int> finishes(texts.size(), 0);
  for (const json& chunk : chunks) {
    if (chunk["choices"].empty()) {  // the usage chunk, last
      EXPECT_EQ(chunk["usage"]["prompt_tokens"], prompt_tokens);
      EXPECT_EQ(chunk["usage"]["completion_tokens"], 8 * texts.size());
      continue;
    }
    const size_t i = chunk["choices"][0]["index"].get<size_t>();
    ASSERT_LT(i, texts.size());
    joined[i] += chunk["choices"][0]["text"].get<std::string>();
    if (!chunk["choices"][0]["finish_reason"].is_null()) ++finishes[i];
  }
  EXPECT_EQ(joined, greedy);
  EXPECT_EQ(finishes, std::vector<int>(texts.size(), 1));
  EXPECT_TRUE(chunks.back()["choices"].empty()) << "the usage chunk comes last";

  auto native = h.client().Post("/completion", body.dump(), "application/json");
  ASSERT_TRUE(native);
  ASSERT_EQ(native->status, 200) << native->body;
  const auto [events, native_done] = events_of(native->body);
  EXPECT_FALSE(native_done) << "llama.cpp's stream has no [DONE]";
  std::vector<std::string> contents(texts.size());
  std::vector<int> finals(texts.size(), 0);
  for (const json& e : events) {
    const size_t i = e["index"].get<size_t>();
    ASSERT_LT(i, texts.size());
    contents[i] += e["content"].get<std::string>();
    if (e["stop"] == true) {
      ++finals[i];
      EXPECT_EQ(e["tokens_predicted"], 8);
    }
  }
  EXPECT_EQ(contents, greedy);
  EXPECT_EQ(finals, std::vector<int>(texts.size(), 1));
}

}  // namespace
}  // namespace infertune
