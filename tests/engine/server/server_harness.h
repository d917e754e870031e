#pragma once
// A server over the llama fixture model for the server tests: model, tokenizer, a context of 256 cells for
// 2 slots, the serving loop and the HTTP server on a free loopback port, plus the reference they are checked
// against (greedy tokens of a prompt decoded alone in a fresh context).
#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "engine/context/context.h"
#include "engine/embedding/pooling.h"
#include "engine/model/model.h"
#include "engine/server/http_server.h"
#include "engine/server/openai_format.h"
#include "engine/server/serving_loop.h"
#include "engine/tokenizer/tokenizer.h"
#include "test_support.h"

namespace infertune::test {

inline std::vector<int32_t> greedy_alone(const Model& model, std::span<const int32_t> prompt, uint32_t n_new) {
  auto ctx = Context::create(model, {.n_ctx = 256, .n_threads = 1});
  EXPECT_TRUE(ctx.ok()) << ctx.error().message;
  std::vector<int32_t> out;
  auto logits = ctx->decode(prompt);
  for (uint32_t i = 0; i < n_new && logits.ok(); ++i) {
    const auto row = *logits;
    out.push_back(static_cast<int32_t>(std::max_element(row.begin(), row.end()) - row.begin()));
    if (i + 1 < n_new) logits = ctx->decode({out.back()});
  }
  return out;
}

struct HarnessOptions {
  uint32_t n_parallel = 2;
  uint32_t max_waiting = 16;
  std::vector<std::string> api_keys{};
  bool metrics = true;
  bool slots = true;
  size_t max_body_bytes = 1u << 20;
  bool start_http = true;
  uint32_t n_ctx = 256;
  std::chrono::microseconds gather = LoopLimits{}.gather;
  std::optional<Pooling> embeddings{};
  std::chrono::milliseconds keep_alive{100};  // set: serve --embeddings with this pooling (a 64-cell embedding context)
};

class ServerHarness {
 public:
  explicit ServerHarness(const HarnessOptions& o = {}) : n_ctx_(o.n_ctx), n_parallel_(o.n_parallel) {
    auto model = Model::load(fixture_path("models/fixture-llama-Q8_0.gguf").string());
    EXPECT_TRUE(model.ok()) << model.error().message;
    model_ = std::make_unique<Model>(std::move(*model));
    auto tokenizer = Tokenizer::from_gguf(model_->file());
    EXPECT_TRUE(tokenizer.ok()) << tokenizer.error().message;
    tokenizer_ = std::make_unique<Tokenizer>(std::move(*tokenizer));
    auto ctx = Context::create(
        *model_, {.n_ctx = o.n_ctx, .n_threads = 1, .n_batch = 64, .n_ubatch = 64, .n_seq_max = o.n_parallel});
    EXPECT_TRUE(ctx.ok()) << ctx.error().message;
    ctx_ = std::make_unique<Context>(std::move(*ctx));
    loop_ = std::make_unique<ServingLoop>(
        *ctx_,
        SchedulerParams{.n_parallel = o.n_parallel,
                        .stop_at_eos = true,
                        .on_token = {},
                        .on_logits = {},
                        .end_tokens = {},
                        .grammar_vocabulary =
                            std::make_shared<const GrammarVocabulary>(GrammarVocabulary::from_tokenizer(*tokenizer_))},
        LoopLimits{.max_waiting = o.max_waiting, .gather = o.gather}, metrics_);
    if (o.embeddings) {
      auto embd = Context::create(
          *model_, {.n_ctx = 64, .n_threads = 1, .n_batch = 64, .n_ubatch = 64, .n_seq_max = 8, .embeddings = true});
      EXPECT_TRUE(embd.ok()) << embd.error().message;
      embedding_ctx_ = std::make_unique<Context>(std::move(*embd));
      loop_->enable_embeddings(*embedding_ctx_, *o.embeddings);
    }
    EXPECT_TRUE(loop_->start().ok());
    if (!o.start_http) return;
    http_ = std::make_unique<HttpServer>(HttpOptions{.host = "127.0.0.1",
                                                     .port = 0,
                                                     .api_keys = o.api_keys,
                                                     .alias = "fixture",
                                                     .metrics = o.metrics,
                                                     .slots = o.slots,
                                                     .threads = 16,
                                                     .max_body_bytes = o.max_body_bytes,
                                                     .keep_alive = o.keep_alive},
                                         metrics_);
    EXPECT_TRUE(http_->bind().ok());
    listener_ = std::thread([this] { http_->serve(); });
  }

  void ready() {
    ServedModel served;
    served.model = model_.get();
    served.tokenizer = tokenizer_.get();
    served.loop = loop_.get();
    served.chat_template = *ChatTemplate::from_name("chatml");
    served.limits.n_ctx = n_ctx_;
    served.limits.n_vocab = model_->config().n_vocab;
    served.limits.defaults.temperature = 0;
    served.props.total_slots = n_parallel_;
    served.props.model_path = fixture_path("models/fixture-llama-Q8_0.gguf").string();
    served.props.chat_template_family = "chatml";
    http_->set_ready(served);
  }

  ~ServerHarness() {
    if (http_) http_->stop();
    if (listener_.joinable()) listener_.join();
    loop_->stop();
  }

  httplib::Client client() const {
    httplib::Client c("127.0.0.1", http_->port());
    c.set_read_timeout(30, 0);
    return c;
  }

  // The pieces of `tokens` joined, as a JSON reply carries them (bytes that are not UTF-8 replaced: the
  // fixture's random weights generate byte tokens in any order).
  std::string text_of(const std::vector<int32_t>& tokens) const { return as_sent(raw_text_of(tokens)); }
  std::string raw_text_of(const std::vector<int32_t>& tokens) const {
    std::string s;
    for (int32_t t : tokens) s += tokenizer_->token_to_piece(t);
    return s;
  }
  static std::string as_sent(const std::string& bytes) {
    return nlohmann::json::parse(serialize(nlohmann::json(bytes))).get<std::string>();
  }

  int http_port() const { return http_->port(); }
  const Model& model() const { return *model_; }
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  Context& context() { return *ctx_; }
  ServingLoop& loop() { return *loop_; }
  ServerMetrics& metrics() { return metrics_; }

 private:
  std::unique_ptr<Model> model_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<Context> ctx_;
  std::unique_ptr<Context> embedding_ctx_;
  ServerMetrics metrics_;
  std::unique_ptr<ServingLoop> loop_;
  std::unique_ptr<HttpServer> http_;
  std::thread listener_;
  uint32_t n_ctx_;
  uint32_t n_parallel_;
};

// POSTs `body` to `path` as JSON and parses the reply, expecting `want_status` (a test failure otherwise).
inline nlohmann::json post_json(ServerHarness& h, const char* path, const nlohmann::json& body, int want_status = 200) {
  auto reply = h.client().Post(path, body.dump(), "application/json");
  EXPECT_TRUE(reply);
  if (!reply) return {};
  EXPECT_EQ(reply->status, want_status) << reply->body;
  return nlohmann::json::parse(reply->body, nullptr, false);
}

}  // namespace infertune::test
