// llama.cpp's own POST /completion (engine/server/native_format.h): the final object's fields from a summary
// (stop_type, stopping_word, tokens_cached, the timings' rates), completion_probabilities, and through the server:
// the greedy continuation decoded alone, whole and streamed (an event per token with its id, a last event with
// stop: true, the slot and no [DONE]), /completions as the same API, a stop string, a repeated prompt found cached
// (and computed again with cache_prompt: false), return_tokens.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "engine/server/native_format.h"
#include "engine/server/text_stream.h"
#include "server_harness.h"

namespace infertune {
namespace {

using nlohmann::json;

const std::string kPrompt = "Once upon a time there was";

TEST(NativeFormat, TheFinalObjectSaysHowTheRequestEnded) {
  NativeSummary s;
  s.model = "m";
  s.prompt_text = "<s> Hi";
  s.tokens_predicted = 5;
  s.tokens_evaluated = 17;
  s.reason = FinishReason::length;
  s.timings = {.cache_n = 16, .prompt_n = 1, .prompt_ms = 2.0, .predicted_n = 5, .predicted_ms = 10.0};
  const json out = native_final_json("abc", s, nullptr);
  EXPECT_EQ(out["content"], "abc");
  EXPECT_EQ(out["stop"], true);
  EXPECT_EQ(out["stop_type"], "limit");
  EXPECT_EQ(out["stopping_word"], "");
  EXPECT_EQ(out["tokens_cached"], 21);  // 17 + 5, less the last token, never decoded
  EXPECT_EQ(out["prompt"], "<s> Hi");
  EXPECT_DOUBLE_EQ(out["timings"]["predicted_per_second"].get<double>(), 500.0);
  EXPECT_DOUBLE_EQ(out["timings"]["predicted_per_token_ms"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(out["timings"]["prompt_per_second"].get<double>(), 500.0);
  EXPECT_FALSE(out.contains("completion_probabilities"));

  s.reason = FinishReason::stop;
  EXPECT_EQ(native_final_json("", s, nullptr)["stop_type"], "eos");
  s.stopping_word = "###";
  EXPECT_EQ(native_final_json("", s, nullptr)["stop_type"], "word");
  EXPECT_EQ(native_final_json("", s, nullptr)["stopping_word"], "###");
  s.timings = {};
  EXPECT_DOUBLE_EQ(native_final_json("", s, nullptr)["timings"]["predicted_per_second"].get<double>(), 0.0);
}

json post(const test::ServerHarness& h, const std::string& path, const json& body) {
  auto res = h.client().Post(path, body.dump(), "application/json");
  EXPECT_TRUE(res) << path;
  if (!res) return json();
  EXPECT_EQ(res->status, 200) << path << ": " << res->body;
  return json::parse(res->body, nullptr, false);
}

TEST(NativeCompletion, IsTheGreedyContinuationWholeOrStreamed) {
  test::ServerHarness h;
  h.ready();
  const std::vector<int32_t> prompt = h.tokenizer().encode(kPrompt, true, true);
  const std::vector<int32_t> greedy = test::greedy_alone(h.model(), prompt, 10);
  const json request = {{"prompt", kPrompt}, {"n_predict", 10}, {"temperature", 0}};
  for (const char* path : {"/completion", "/completions"}) {
    const json whole = post(h, path, request);
    EXPECT_EQ(whole["content"], h.text_of(greedy)) << path;
    EXPECT_EQ(whole["tokens_predicted"], 10) << path;
    EXPECT_EQ(whole["tokens_evaluated"], prompt.size()) << path;
    EXPECT_EQ(whole["stop_type"], "limit") << path;
    EXPECT_EQ(whole["prompt"], h.raw_text_of(prompt)) << path;
    EXPECT_EQ(whole["generation_settings"]["n_predict"], 10) << path;
    EXPECT_GT(whole["timings"]["predicted_ms"].get<double>(), 0.0) << path;
  }

  json streamed = request;
  streamed["stream"] = true;
  auto events = h.client().Post("/completion", streamed.dump(), "application/json");
  ASSERT_TRUE(events);
  ASSERT_EQ(events->status, 200);
  EXPECT_EQ(events->body.find("[DONE]"), std::string::npos);
  std::vector<json> data;
  for (size_t at = 0; (at = events->body.find("data: ", at)) != std::string::npos;) {
    const size_t end = events->body.find("\n\n", at);
    data.push_back(json::parse(events->body.substr(at + 6, end - at - 6)));
    at = end;
  }
  ASSERT_GE(data.size(), 2u);
  std::string text;
  std::vector<int32_t> ids;
  // An event per token, but a token that ends inside a character goes with the next one.
  size_t partial = 0;
  std::string sent;
  for (size_t i = 0; i < greedy.size(); ++i) {
    sent += h.tokenizer().token_to_piece(greedy[i]);
    if (i + 1 < greedy.size() && incomplete_utf8_tail(sent) > 0) ++partial;
  }
  ASSERT_EQ(data.size(), greedy.size() - partial + 1) << "an event per token, then the final object";
  for (size_t i = 0; i + 1 < data.size(); ++i) {
    EXPECT_EQ(data[i]["stop"], false);
    EXPECT_GE(data[i]["tokens"].size(), 1u) << "event " << i;
    EXPECT_EQ(data[i]["id_slot"], -1) << "llama-server names the slot in the final object only";
    text += data[i]["content"].get<std::string>();
    for (const json& id : data[i]["tokens"]) ids.push_back(id.get<int32_t>());
  }
  EXPECT_EQ(text, h.text_of(greedy));
  EXPECT_EQ(ids, greedy);
  EXPECT_EQ(data.back()["stop"], true);
  EXPECT_EQ(data.back()["content"], "");
  EXPECT_EQ(data.back()["tokens_predicted"], 10);
  EXPECT_GE(data.back()["id_slot"].get<int>(), 0);
  EXPECT_LT(data.back()["id_slot"].get<int>(), 2);
}

TEST(NativeCompletion, AStopStringAndARepeatedPrompt) {
  test::ServerHarness h;
  h.ready();
  const std::vector<int32_t> prompt = h.tokenizer().encode(kPrompt, true, true);
  const std::string text = h.raw_text_of(test::greedy_alone(h.model(), prompt, 10));
  const json first = post(h, "/completion", {{"prompt", kPrompt}, {"n_predict", 10}, {"temperature", 0}});
  // The same prompt again: all of it but the last token is found cached (that one is computed for its logits).
  const json again = post(h, "/completion", {{"prompt", kPrompt}, {"n_predict", 10}, {"temperature", 0}});
  EXPECT_EQ(first["timings"]["cache_n"], 0);
  EXPECT_EQ(again["timings"]["cache_n"], prompt.size() - 1);
  EXPECT_EQ(again["timings"]["prompt_n"], 1);
  EXPECT_EQ(again["tokens"], json::array()) << "ids only with return_tokens";
  // cache_prompt: false computes it all again; return_tokens gives the generated ids.
  const json uncached = post(h, "/completion",
                             {{"prompt", kPrompt},
                              {"n_predict", 10},
                              {"temperature", 0},
                              {"cache_prompt", false},
                              {"return_tokens", true}});
  EXPECT_EQ(uncached["timings"]["cache_n"], 0);
  EXPECT_EQ(uncached["timings"]["prompt_n"], prompt.size());
  EXPECT_EQ(uncached["tokens"].get<std::vector<int32_t>>(), test::greedy_alone(h.model(), prompt, 10));

  // Two printable ASCII bytes past the start, first seen there (the fixture's random weights write any bytes).
  std::string stop;
  for (size_t i = 1; i + 1 < text.size() && stop.empty(); ++i) {
    const auto printable = [](char c) { return c > ' ' && c < 127; };
    if (printable(text[i]) && printable(text[i + 1]) && text.find(text.substr(i, 2)) == i) stop = text.substr(i, 2);
  }
  ASSERT_FALSE(stop.empty()) << "no ASCII pair in the greedy text";
  const json stopped =
      post(h, "/completion", {{"prompt", kPrompt}, {"n_predict", 10}, {"temperature", 0}, {"stop", {stop}}});
  EXPECT_EQ(stopped["stop_type"], "word");
  EXPECT_EQ(stopped["stopping_word"], stop);
  EXPECT_EQ(stopped["content"], test::ServerHarness::as_sent(text.substr(0, text.find(stop))));
}

TEST(NativeCompletion, NProbsGivesTheChosenTokensWithTheirAlternatives) {
  test::ServerHarness h;
  h.ready();
  const std::vector<int32_t> prompt = h.tokenizer().encode(kPrompt, true, true);
  const std::vector<int32_t> greedy = test::greedy_alone(h.model(), prompt, 3);
  const json out = post(h, "/completion", {{"prompt", kPrompt}, {"n_predict", 3}, {"temperature", 0}, {"n_probs", 2}});
  ASSERT_EQ(out["completion_probabilities"].size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    const json& p = out["completion_probabilities"][i];
    EXPECT_EQ(p["id"], greedy[i]);
    ASSERT_EQ(p["top_logprobs"].size(), 2u);
    EXPECT_EQ(p["top_logprobs"][0]["id"], greedy[i]);  // greedy: the chosen token is the most likely
    EXPECT_LE(p["logprob"].get<float>(), 0.0f);
  }
}

}  // namespace
}  // namespace infertune
