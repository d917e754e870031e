// serve --embeddings: /v1/embeddings answers in OpenAI's shape (floats or base64) with the vectors the Embedder
// computes for the same tokens, /embeddings and /embedding in llama-server's (a row per token with --pooling
// none), embedding requests and completions run side by side on one loop, and what cannot be served is refused
// with the field or the flag named.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "engine/embedding/embedder.h"
#include "engine/server/embedding_route.h"
#include "server_harness.h"

namespace infertune {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;

// The vectors of `texts` computed directly, as the server tokenizes them (BOS and special tokens).
std::vector<Embedding> direct(test::ServerHarness& h, const std::vector<std::string>& texts, Pooling pooling) {
  auto ctx = Context::create(h.model(), {.n_ctx = 64, .n_threads = 1, .embeddings = true});
  EXPECT_TRUE(ctx.ok());
  std::vector<std::vector<int32_t>> inputs;
  for (const std::string& t : texts) inputs.push_back(h.tokenizer().encode(t, true, true));
  Embedder embedder(*ctx, {.pooling = pooling, .normalize = pooling == Pooling::none ? -1 : kEuclideanNorm});
  auto out = embedder.embed(inputs);
  EXPECT_TRUE(out.ok());
  return out ? *out : std::vector<Embedding>{};
}

void expect_row(const json& got, std::span<const float> want) {
  ASSERT_TRUE(got.is_array());
  ASSERT_EQ(got.size(), want.size());
  for (size_t d = 0; d < want.size(); ++d) ASSERT_NEAR(got[d].get<float>(), want[d], 1e-4) << "dimension " << d;
}

TEST(EmbeddingRoute, OpenAiVectorsAreTheEmbeddersInInputOrder) {
  test::ServerHarness h({.embeddings = Pooling::mean});
  h.ready();
  const std::vector<std::string> texts = {"Once upon a time", "there was a tiny model", "x"};
  const json reply = test::post_json(h, "/v1/embeddings", {{"input", texts}, {"model", "my-embedder"}});
  ASSERT_EQ(reply["object"], "list");
  EXPECT_EQ(reply["model"], "my-embedder");
  const auto want = direct(h, texts, Pooling::mean);
  ASSERT_EQ(reply["data"].size(), texts.size());
  size_t n_tokens = 0;
  for (size_t i = 0; i < texts.size(); ++i) {
    const json& item = reply["data"][i];
    EXPECT_EQ(item["object"], "embedding");
    EXPECT_EQ(item["index"], i);
    expect_row(item["embedding"], want[i].row(0));
    double sq = 0;
    for (const json& v : item["embedding"]) sq += v.get<double>() * v.get<double>();
    EXPECT_NEAR(std::sqrt(sq), 1.0, 1e-5) << "euclidean by default";
    n_tokens += h.tokenizer().encode(texts[i], true, true).size();
  }
  EXPECT_EQ(reply["usage"]["prompt_tokens"], n_tokens);
  EXPECT_EQ(reply["usage"]["total_tokens"], n_tokens);

  // One string is one input; token ids are taken as they are; embd_normalize -1 leaves the mean unscaled.
  const json one = test::post_json(h, "/v1/embeddings", {{"input", texts[0]}});
  ASSERT_EQ(one["data"].size(), 1u);
  expect_row(one["data"][0]["embedding"], want[0].row(0));
  const json ids = test::post_json(h, "/v1/embeddings", {{"input", h.tokenizer().encode(texts[0], true, true)}});
  expect_row(ids["data"][0]["embedding"], want[0].row(0));
  const json raw = test::post_json(h, "/v1/embeddings", {{"input", texts[0]}, {"embd_normalize", -1}});
  double sq = 0;
  for (const json& v : raw["data"][0]["embedding"]) sq += v.get<double>() * v.get<double>();
  EXPECT_GT(std::fabs(std::sqrt(sq) - 1.0), 1e-3);
}

TEST(EmbeddingRoute, Base64CarriesTheFloat32Bytes) {
  test::ServerHarness h({.embeddings = Pooling::last});
  h.ready();
  const json floats = test::post_json(h, "/v1/embeddings", {{"input", "Once upon a time"}});
  const json encoded =
      test::post_json(h, "/v1/embeddings", {{"input", "Once upon a time"}, {"encoding_format", "base64"}});
  ASSERT_EQ(encoded["data"][0]["encoding_format"], "base64");
  const std::string text = encoded["data"][0]["embedding"].get<std::string>();
  const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string bytes;
  uint32_t bits = 0;
  int n_bits = 0;
  for (char c : text) {
    if (c == '=') break;
    bits = (bits << 6) | static_cast<uint32_t>(alphabet.find(c));
    n_bits += 6;
    if (n_bits >= 8) {
      n_bits -= 8;
      bytes += static_cast<char>((bits >> n_bits) & 0xFF);
    }
  }
  const json& want = floats["data"][0]["embedding"];
  ASSERT_EQ(bytes.size(), want.size() * sizeof(float));
  for (size_t d = 0; d < want.size(); ++d) {
    float v = 0;
    std::memcpy(&v, bytes.data() + d * sizeof(float), sizeof(float));
    EXPECT_EQ(v, want[d].get<float>()) << "dimension " << d;
  }
}

TEST(EmbeddingRoute, NativeRepliesCarryARowPerTokenWithoutPooling) {
  test::ServerHarness h({.embeddings = Pooling::none});
  h.ready();
  const std::vector<std::string> texts = {"Once upon a time", "a cat"};
  const auto want = direct(h, texts, Pooling::none);
  for (const char* path : {"/embeddings", "/embedding"}) {
    const json reply = test::post_json(h, path, {{"content", texts}});
    ASSERT_TRUE(reply.is_array()) << path;
    ASSERT_EQ(reply.size(), texts.size());
    for (size_t i = 0; i < texts.size(); ++i) {
      EXPECT_EQ(reply[i]["index"], i);
      ASSERT_EQ(reply[i]["embedding"].size(), want[i].n_rows()) << "a row per token";
      for (size_t r = 0; r < want[i].n_rows(); ++r) expect_row(reply[i]["embedding"][r], want[i].row(r));
    }
  }
  const json refused = test::post_json(h, "/v1/embeddings", {{"input", "a cat"}}, 400);
  EXPECT_THAT(refused["error"]["message"].get<std::string>(), HasSubstr("--pooling mean, cls or last"));
  // "content" is answered natively on the OpenAI path too, as llama-server does.
  const json native = test::post_json(h, "/v1/embeddings", {{"content", "a cat"}});
  ASSERT_TRUE(native.is_array());
  EXPECT_EQ(native[0]["embedding"].size(), want[1].n_rows());
}

TEST(EmbeddingRoute, EmbeddingsAndCompletionsShareTheLoop) {
  test::ServerHarness h({.embeddings = Pooling::mean});
  h.ready();
  const auto prompt = h.tokenizer().encode("Once upon a time", true, true);
  const auto greedy = test::greedy_alone(h.model(), prompt, 24);
  json completion;
  std::thread generating([&] {
    completion = test::post_json(h, "/completion", {{"prompt", prompt}, {"n_predict", 24}, {"temperature", 0}});
  });
  std::vector<std::string> many(40, "there was a tiny model");
  const json embedded = test::post_json(h, "/v1/embeddings", {{"input", many}});
  generating.join();
  ASSERT_EQ(embedded["data"].size(), many.size());
  const auto want = direct(h, {many[0]}, Pooling::mean);
  for (const json& item : embedded["data"]) expect_row(item["embedding"], want[0].row(0));
  EXPECT_EQ(completion["content"], h.text_of(greedy));
}

TEST(EmbeddingRoute, ALongRequestIsSentInChunksAfterKeepAliveSpaces) {
  test::ServerHarness h({.embeddings = Pooling::mean, .keep_alive = std::chrono::milliseconds(1)});
  h.ready();
  const std::vector<std::string> many(kMaxEmbeddingInputs, "there was a tiny model");
  auto reply = h.client().Post("/v1/embeddings", json{{"input", many}}.dump(), "application/json");
  ASSERT_TRUE(reply);
  ASSERT_EQ(reply->status, 200);
  EXPECT_EQ(reply->body.front(), ' ') << "2048 inputs take longer than the 1 ms keep-alive period";
  const json body = json::parse(reply->body);
  ASSERT_EQ(body["data"].size(), many.size());
  const auto want = direct(h, {many[0]}, Pooling::mean);
  expect_row(body["data"][2047]["embedding"], want[0].row(0));
  const json too_many =
      test::post_json(h, "/v1/embeddings", {{"input", std::vector<std::string>(kMaxEmbeddingInputs + 1, "a")}}, 400);
  EXPECT_THAT(too_many["error"]["message"].get<std::string>(), HasSubstr("at most 2048"));
}

TEST(EmbeddingRoute, AFullQueueIsRefusedWithRetryAfter) {
  test::ServerHarness h({.max_waiting = 1, .embeddings = Pooling::mean});
  h.ready();
  std::vector<std::vector<int32_t>> many(kMaxEmbeddingInputs,
                                         h.tokenizer().encode("there was a tiny model", true, true));
  auto first = h.loop().submit_embeddings({.inputs = many});
  ASSERT_TRUE(first.ticket);
  auto second = h.loop().submit_embeddings({.inputs = {many[0]}});
  EXPECT_FALSE(second.ticket) << "the first request (2048 inputs) is still held";
  EXPECT_EQ(second.refusal, ServingLoop::Refusal::queue_full);
  while (!first.ticket->wait(std::chrono::milliseconds(100))) {
  }
  EXPECT_TRUE(h.loop().wait_idle(std::chrono::steady_clock::now() + std::chrono::seconds(10)));
  EXPECT_TRUE(h.loop().submit_embeddings({.inputs = {many[0]}}).ticket) << "room again once it is answered";
}

// Text of more tokens than the harness's 64-cell embedding context holds.
std::string long_text() {
  std::string text;
  for (int i = 0; i < 100; ++i) text += fmt::format(" once{} upon", i);
  return text;
}

TEST(EmbeddingRoute, WhatCannotBeServedIsRefusedNamingIt) {
  {
    test::ServerHarness off;
    off.ready();
    const json reply = test::post_json(off, "/v1/embeddings", {{"input", "a cat"}}, 501);
    EXPECT_THAT(reply["error"]["message"].get<std::string>(), HasSubstr("start it with --embeddings"));
  }
  test::ServerHarness h({.embeddings = Pooling::mean});
  h.ready();
  const std::vector<std::pair<json, std::string>> cases = {
      {json::object(), "input (or content) is required"},
      {{{"input", ""}}, "input must not be empty"},
      {{{"input", {"a", ""}}}, "input[1] must not be empty"},
      {{{"input", {1, 2, 999999}}}, "input[2] must be a token id"},
      {{{"input", "a cat"}, {"encoding_format", "int8"}}, "encoding_format must be \"float\" or \"base64\""},
      {{{"input", "a cat"}, {"embd_normalize", -2}}, "embd_normalize"},
      {{{"input", long_text()}}, "an input may have at most 64 tokens"},
  };
  for (const auto& [body, says] : cases) {
    const json reply = test::post_json(h, "/v1/embeddings", body, 400);
    EXPECT_THAT(reply["error"]["message"].get<std::string>(), HasSubstr(says)) << body.dump();
  }
}

}  // namespace
}  // namespace infertune
