// The HTTP routes of `infertune serve` (engine/server/http_server.h) with cpp-httplib's client on loopback:
// /health before and after the model is ready, API keys, completions (whole and streamed) whose text is the
// prompt's greedy continuation decoded alone, stop strings, log-probabilities, chat through the template,
// bad requests answered 400/413 naming the problem, a full queue 503, tokenize/detokenize, metrics, and a
// streaming client that goes away having its request cancelled and its cells freed.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <cctype>
#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "server_harness.h"

namespace infertune {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

const std::string kPrompt = "Once upon a time there was";

std::vector<int32_t> prompt_ids(const test::ServerHarness& h) { return h.tokenizer().encode(kPrompt, true, true); }

// The data lines of a server-sent event stream, in order.
std::vector<std::string> sse_data(const std::string& body) {
  std::vector<std::string> out;
  size_t at = 0;
  while ((at = body.find("data: ", at)) != std::string::npos) {
    const size_t end = body.find("\n\n", at);
    out.push_back(body.substr(at + 6, end - at - 6));
    at = end;
  }
  return out;
}

TEST(HttpServer, HealthIs503UntilTheModelIsReady) {
  test::ServerHarness h;
  auto c = h.client();
  EXPECT_EQ(c.Get("/health")->status, 503);
  EXPECT_EQ(c.Get("/v1/models")->status, 503);
  h.ready();
  EXPECT_EQ(c.Get("/health")->status, 200);
  auto models = c.Get("/v1/models");
  ASSERT_EQ(models->status, 200);
  EXPECT_EQ(json::parse(models->body)["data"][0]["id"], "fixture");
}

// `serve -m missing.gguf` stops the server right after starting its listener: a stop that comes before httplib's
// loop runs must still end serve() (it used to listen forever, and the process never exited).
TEST(HttpServer, AStopThatComesWhileServingStartsEndsIt) {
  for (int round = 0; round < 50; ++round) {
    ServerMetrics metrics;
    HttpServer server({.host = "127.0.0.1", .port = 0}, metrics);
    ASSERT_TRUE(server.bind().ok());
    std::promise<void> served;
    std::thread listener([&] {
      server.serve();
      served.set_value();
    });
    if (round % 2 == 0) std::this_thread::yield();
    server.stop();
    const bool ended = served.get_future().wait_for(10s) == std::future_status::ready;
    if (!ended) server.stop();  // listening by now: let the thread end before failing
    listener.join();
    ASSERT_TRUE(ended) << "round " << round << ": serve() kept listening after stop()";
  }
}

TEST(HttpServer, EveryRouteButHealthNeedsTheKey) {
  test::ServerHarness h({.api_keys = {"sk-one", "sk-two"}});
  h.ready();
  auto c = h.client();
  EXPECT_EQ(c.Get("/health")->status, 200);
  auto none = c.Get("/v1/models");
  EXPECT_EQ(none->status, 401);
  EXPECT_EQ(json::parse(none->body)["error"]["type"], "authentication_error");
  EXPECT_EQ(c.Get("/v1/models", {{"Authorization", "Bearer sk-on"}})->status, 401);
  EXPECT_EQ(c.Get("/v1/models", {{"Authorization", "Bearer sk-two"}})->status, 200);
  EXPECT_EQ(c.Post("/tokenize", R"({"content":"a"})", "application/json")->status, 401);
  EXPECT_TRUE(api_key_matches("sk-one", {"sk-one"}));
  EXPECT_FALSE(api_key_matches("sk-one-more", {"sk-one"}));
  EXPECT_FALSE(api_key_matches("", {"sk-one"}));
}

TEST(HttpServer, CompletionIsTheGreedyContinuationWholeOrStreamed) {
  test::ServerHarness h;
  h.ready();
  auto c = h.client();
  const std::string want = h.text_of(test::greedy_alone(h.model(), prompt_ids(h), 12));
  const json request = {{"prompt", kPrompt}, {"max_tokens", 12}, {"temperature", 0}};
  auto whole = c.Post("/v1/completions", request.dump(), "application/json");
  ASSERT_EQ(whole->status, 200) << whole->body;
  const json body = json::parse(whole->body);
  EXPECT_EQ(body["object"], "text_completion");
  EXPECT_EQ(body["choices"][0]["text"], want);
  EXPECT_EQ(body["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(body["usage"]["completion_tokens"], 12);
  EXPECT_EQ(body["usage"]["prompt_tokens"], prompt_ids(h).size());

  json streamed = request;
  streamed["stream"] = true;
  streamed["stream_options"] = {{"include_usage", true}};
  auto events = c.Post("/v1/completions", streamed.dump(), "application/json");
  ASSERT_EQ(events->status, 200);
  EXPECT_THAT(events->get_header_value("Content-Type"), HasSubstr("text/event-stream"));
  const auto data = sse_data(events->body);
  ASSERT_GE(data.size(), 3u);
  EXPECT_EQ(data.back(), "[DONE]");
  std::string text;
  for (size_t i = 0; i + 1 < data.size(); ++i) {
    const json chunk = json::parse(data[i]);
    if (!chunk["choices"].empty()) text += chunk["choices"][0]["text"].get<std::string>();
  }
  EXPECT_EQ(text, want);
  const json last = json::parse(data[data.size() - 2]);
  EXPECT_TRUE(last["choices"].empty());
  EXPECT_EQ(last["usage"]["completion_tokens"], 12);
  EXPECT_EQ(json::parse(data[data.size() - 3])["choices"][0]["finish_reason"], "length");
}

TEST(HttpServer, AStopStringEndsTheTextBeforeIt) {
  test::ServerHarness h;
  h.ready();
  auto c = h.client();
  // A stop string of two ASCII letters from the second half of the greedy text (the fixture's random weights
  // also generate bytes that are not UTF-8, which a request cannot carry).
  const std::string full = h.raw_text_of(test::greedy_alone(h.model(), prompt_ids(h), 16));
  size_t at = full.size() / 2;
  while (at + 1 < full.size() && !(std::isalnum(static_cast<unsigned char>(full[at])) &&
                                   std::isalnum(static_cast<unsigned char>(full[at + 1])))) {
    ++at;
  }
  ASSERT_LT(at + 1, full.size()) << "no two ASCII letters in the second half of the text";
  const std::string stop = full.substr(at, 2);
  const std::string want = h.as_sent(full.substr(0, full.find(stop)));
  for (bool stream : {false, true}) {
    const json request = {
        {"prompt", kPrompt}, {"max_tokens", 16}, {"temperature", 0}, {"stop", {stop}}, {"stream", stream}};
    auto res = c.Post("/v1/completions", request.dump(), "application/json");
    ASSERT_EQ(res->status, 200);
    std::string text;
    std::string reason;
    if (!stream) {
      text = json::parse(res->body)["choices"][0]["text"];
      reason = json::parse(res->body)["choices"][0]["finish_reason"];
    } else {
      for (const std::string& d : sse_data(res->body)) {
        if (d == "[DONE]") continue;
        const json chunk = json::parse(d);
        text += chunk["choices"][0]["text"].get<std::string>();
        if (!chunk["choices"][0]["finish_reason"].is_null()) reason = chunk["choices"][0]["finish_reason"];
      }
    }
    EXPECT_EQ(text, want) << "stream " << stream;
    EXPECT_EQ(reason, "stop");
  }
  ASSERT_TRUE(h.loop().wait_idle(std::chrono::steady_clock::now() + 5s));
  EXPECT_EQ(h.metrics().gauges().busy_slots, 0u);
}

TEST(HttpServer, LogprobsAreThoseOfTheChosenTokens) {
  test::ServerHarness h;
  h.ready();
  auto c = h.client();
  const json request = {{"prompt", kPrompt}, {"max_tokens", 4}, {"temperature", 0}, {"logprobs", 3}};
  const json body = json::parse(c.Post("/v1/completions", request.dump(), "application/json")->body);
  const json& lp = body["choices"][0]["logprobs"];
  ASSERT_EQ(lp["tokens"].size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    // Keyed by piece: the fixture's byte tokens that are not UTF-8 all read U+FFFD and share a key.
    ASSERT_GE(lp["top_logprobs"][i].size(), 1u);
    ASSERT_LE(lp["top_logprobs"][i].size(), 3u);
    // Greedy: the chosen token is the most likely one.
    for (const auto& [piece, value] : lp["top_logprobs"][i].items()) {
      EXPECT_GE(lp["token_logprobs"][i].get<float>(), value.get<float>());
    }
    EXPECT_LE(lp["token_logprobs"][i].get<float>(), 0.0f);
  }
  const json chat = {{"messages", {{{"role", "user"}, {"content", "hi"}}}},
                     {"max_tokens", 2},
                     {"logprobs", true},
                     {"top_logprobs", 2}};
  const json reply = json::parse(c.Post("/v1/chat/completions", chat.dump(), "application/json")->body);
  ASSERT_EQ(reply["choices"][0]["logprobs"]["content"].size(), 2u);
  EXPECT_EQ(reply["choices"][0]["logprobs"]["content"][0]["top_logprobs"].size(), 2u);
}

TEST(HttpServer, ChatRunsTheTemplatedPrompt) {
  test::ServerHarness h;
  h.ready();
  auto c = h.client();
  const json messages = {{{"role", "system"}, {"content", "Be brief."}}, {{"role", "user"}, {"content", "Hello"}}};
  auto rendered = c.Post("/apply-template", json{{"messages", messages}}.dump(), "application/json");
  ASSERT_EQ(rendered->status, 200);
  const std::string prompt = json::parse(rendered->body)["prompt"];
  EXPECT_EQ(prompt,
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n");
  const std::string want = h.text_of(test::greedy_alone(h.model(), h.tokenizer().encode(prompt, true, true), 6));
  const json request = {{"messages", messages}, {"max_tokens", 6}, {"temperature", 0}};
  auto res = c.Post("/v1/chat/completions", request.dump(), "application/json");
  ASSERT_EQ(res->status, 200) << res->body;
  const json body = json::parse(res->body);
  EXPECT_EQ(body["object"], "chat.completion");
  EXPECT_EQ(body["choices"][0]["message"]["role"], "assistant");
  EXPECT_EQ(body["choices"][0]["message"]["content"], want);
}

TEST(HttpServer, BadRequestsAreRefusedNamingTheProblem) {
  test::ServerHarness h({.max_body_bytes = 4096});
  h.ready();
  auto c = h.client();
  const auto refuse = [&](const std::string& path, const std::string& body, int status, const std::string& says) {
    auto res = c.Post(path, body, "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, status) << body;
    EXPECT_THAT(json::parse(res->body)["error"]["message"].get<std::string>(), HasSubstr(says)) << body;
  };
  refuse("/v1/completions", "{not json", 400, "not valid JSON");
  refuse("/v1/completions", R"({"prompt":"a","temperature":7})", 400, "temperature");
  refuse("/v1/completions", R"({"prompt":"a","top_p":"high"})", 400, "top_p");
  refuse("/v1/completions", R"({"prompt":"a","max_tokens":0})", 400, "max_tokens");
  refuse("/v1/completions", R"({"prompt":["a","b"],"n":33})", 400, "at most 64 completions per request");
  refuse("/v1/completions", R"({"prompt":[1, 99999]})", 400, "prompt[1]");
  refuse("/v1/completions", R"({"max_tokens":3})", 400, "prompt is required");
  refuse("/v1/completions", json{{"prompt", std::string(3000, 'x')}}.dump(), 400, "context");
  refuse("/v1/completions", json{{"prompt", std::string(5000, 'x')}}.dump(), 413, "larger");
  refuse("/v1/chat/completions", R"({"messages":[{"role":"user","content":[{"type":"image_url"}]}]})", 400,
         "messages[0].content");
  refuse("/detokenize", R"({"tokens":[-1]})", 400, "tokens[0]");
  refuse("/detokenize", R"({"tokens":[[[1]]]})", 400, "got an array");
  refuse("/tokenize", R"({"content":"a","add_special":"yes"})", 400, "add_special must be true or false");
  refuse("/tokenize", R"({"content":"a","with_pieces":1})", 400, "with_pieces must be true or false");
  refuse("/apply-template", R"({"messages":[{"role":"user","content":"a"}],"add_generation_prompt":0})", 400,
         "add_generation_prompt must be true or false");
  refuse("/v1/completions", std::string(100, '[') + std::string(100, ']'), 400, "deeper than 64");
  EXPECT_EQ(c.Get("/v1/nothing")->status, 404);
}

TEST(HttpServer, AFullQueueIs503WithRetryAfter) {
  test::ServerHarness h({.n_parallel = 1, .max_waiting = 0, .n_ctx = 2048});
  h.ready();
  // Long enough to be running still when the second request comes.
  const json request = {{"prompt", kPrompt}, {"max_tokens", 2000}, {"temperature", 0}};
  std::thread busy([&] { h.client().Post("/v1/completions", request.dump(), "application/json"); });
  while (h.metrics().gauges().busy_slots == 0) std::this_thread::sleep_for(5ms);
  auto refused = h.client().Post("/v1/completions", request.dump(), "application/json");
  EXPECT_EQ(refused->status, 503);
  EXPECT_EQ(refused->get_header_value("Retry-After"), "1");
  busy.join();
}

TEST(HttpServer, TokenizeAndDetokenizeRoundTrip) {
  test::ServerHarness h;
  h.ready();
  auto c = h.client();
  const json ids = json::parse(c.Post("/tokenize", json{{"content", kPrompt}}.dump(), "application/json")->body);
  EXPECT_EQ(ids["tokens"].get<std::vector<int32_t>>(), h.tokenizer().encode(kPrompt, false, true));
  const json text = json::parse(c.Post("/detokenize", ids.dump(), "application/json")->body);
  EXPECT_EQ(text["content"], kPrompt);
  const json pieces =
      json::parse(c.Post("/tokenize", json{{"content", "a"}, {"with_pieces", true}}.dump(), "application/json")->body);
  EXPECT_TRUE(pieces["tokens"][0].contains("piece"));
}

TEST(HttpServer, MetricsCountRequestsAndTokens) {
  test::ServerHarness h;
  h.ready();
  auto c = h.client();
  ASSERT_EQ(c.Post("/v1/completions", json{{"prompt", kPrompt}, {"max_tokens", 3}}.dump(), "application/json")->status,
            200);
  // A request is counted once its reply has been written (cpp-httplib's logger runs after the write), which may be
  // just after the client has read it: wait for the count.
  const std::string counted = "infertune_requests_total{endpoint=\"/v1/completions\",status=\"200\"} 1";
  httplib::Result metrics = c.Get("/metrics");
  for (int i = 0; i < 100 && metrics && metrics->body.find(counted) == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    metrics = c.Get("/metrics");
  }
  ASSERT_TRUE(metrics);
  ASSERT_EQ(metrics->status, 200);
  EXPECT_THAT(metrics->body, HasSubstr(counted));
  EXPECT_THAT(metrics->body, HasSubstr("infertune_generated_tokens_total 3"));
  EXPECT_THAT(metrics->body, HasSubstr("infertune_time_to_first_token_seconds_count 1"));
  EXPECT_THAT(metrics->body, HasSubstr("infertune_kv_cells 256"));
  test::ServerHarness off({.metrics = false});
  off.ready();
  EXPECT_EQ(off.client().Get("/metrics")->status, 501);
}

// A raw socket: send a streaming request, read its first bytes, close without reading the rest.
void stream_and_hang_up(int port, const std::string& body) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  const std::string request =
      "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
      "Content-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body;
  ASSERT_EQ(::send(fd, request.data(), request.size(), 0), static_cast<ssize_t>(request.size()));
  char buffer[256];
  ASSERT_GT(::recv(fd, buffer, sizeof buffer, 0), 0);
  ::close(fd);
}

TEST(HttpServer, AClientThatGoesAwayHasItsRequestCancelledAndCellsFreed) {
  // Room for a request that runs longer than the hang-up takes, even on a busy machine (over a second of tokens),
  // and that the end token cannot finish first.
  test::ServerHarness h({.n_ctx = 16384});
  h.ready();
  for (bool stream : {true, false}) {
    const uint64_t cancelled = h.metrics().cancelled();
    const json request = {
        {"prompt", kPrompt}, {"max_tokens", 16000}, {"temperature", 0}, {"stream", stream}, {"ignore_eos", true}};
    stream_and_hang_up(h.http_port(), request.dump());
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (h.metrics().gauges().busy_slots > 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(10ms);
    }
    EXPECT_TRUE(h.loop().wait_idle(deadline)) << "stream " << stream;
    EXPECT_EQ(h.metrics().cancelled(), cancelled + 1) << "stream " << stream;
    EXPECT_EQ(h.context().kv_cache().n_used(), 0u) << "stream " << stream;
  }
}

}  // namespace
}  // namespace infertune
