// loadgen (bench/loadgen): its parsing and statistics against hand-computed values, synthetic prompts of the
// asked length with the shared prefix first, JSONL prompt files with their errors, and whole load levels
// (closed and open loop) against `infertune serve`'s routes on the llama fixture: every request succeeds and
// yields exactly max_tokens tokens (ignore_eos), one chunk gap per token after the first; and a server that closes
// each connection after its streamed reply (as llama-server does) costs no request.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <random>
#include <thread>

#include "bench/loadgen/load_report.h"
#include "bench/loadgen/load_runner.h"
#include "bench/loadgen/load_summary.h"
#include "bench/loadgen/prompt_source.h"
#include "bench/loadgen/stream_request.h"
#include "engine/server/server_harness.h"

namespace infertune {
namespace {

using ::testing::HasSubstr;

TEST(Loadgen, ParsesLengthsAndDurations) {
  EXPECT_EQ(parse_length_range("90")->low, 90u);
  EXPECT_EQ(parse_length_range("50:200")->high, 200u);
  EXPECT_FALSE(parse_length_range("200:50").ok());
  EXPECT_FALSE(parse_length_range("0").ok());
  EXPECT_FALSE(parse_length_range("ten").ok());
  EXPECT_DOUBLE_EQ(*parse_duration_seconds("500ms"), 0.5);
  EXPECT_DOUBLE_EQ(*parse_duration_seconds("2s"), 2.0);
  EXPECT_DOUBLE_EQ(*parse_duration_seconds("0.25"), 0.25);
  EXPECT_FALSE(parse_duration_seconds("-1s").ok());
  EXPECT_FALSE(parse_duration_seconds("fast").ok());
}

TEST(Loadgen, PercentilesInterpolateBetweenOrderStatistics) {
  const Percentiles p = percentiles({4, 1, 3, 2, 5});
  EXPECT_DOUBLE_EQ(p.p50, 3);
  EXPECT_DOUBLE_EQ(p.p95, 4.8);  // 0.95 * 4 = 3.8: between 4 and 5
  EXPECT_DOUBLE_EQ(p.mean, 3);
  EXPECT_DOUBLE_EQ(percentiles({}).p99, 0);
  EXPECT_DOUBLE_EQ(percentiles({7}).p99, 7);
}

TEST(Loadgen, SyntheticPromptsHaveTheLengthAndTheSharedPrefix) {
  LoadOptions o;
  o.prompt_tokens = {40, 40};
  o.shared_prefix = 0.5;
  PromptSource source = PromptSource::synthetic(o, 1.0);  // a word per token
  std::mt19937_64 rng(1);
  const Prompt a = source.next(rng), b = source.next(rng);
  const auto words = [](const std::string& s) {
    return std::count_if(s.begin(), s.end(), [](char c) { return c == ' ' || c == '\n'; }) + 1;
  };
  EXPECT_EQ(words(a.text), 40);  // 20 shared words, a newline, 20 of its own
  const std::string prefix = PromptSource::words(20, 0);
  EXPECT_EQ(a.text.substr(0, prefix.size()), prefix);
  EXPECT_EQ(b.text.substr(0, prefix.size()), prefix);
  EXPECT_NE(a.text, b.text);
  EXPECT_EQ(a.messages[0]["role"], "system");
  EXPECT_EQ(a.messages[0]["content"], prefix);
}

TEST(Loadgen, PromptFilesAreReadLineByLineWithErrorsNamingTheLine) {
  const auto dir = test::temp_dir();
  const std::string good = (dir / "good.jsonl").string(), bad = (dir / "bad.jsonl").string();
  std::ofstream(good) << "{\"prompt\": \"one\"}\n\n{\"messages\": [{\"role\": \"user\", \"content\": \"two\"}]}\n";
  std::ofstream(bad) << "{\"prompt\": \"one\"}\n{\"text\": 3}\n";
  auto source = PromptSource::from_jsonl(good, LoadApi::chat);
  ASSERT_TRUE(source.ok()) << source.error().message;
  std::mt19937_64 rng(1);
  EXPECT_EQ(source->next(rng).text, "one");
  EXPECT_EQ(source->next(rng).messages[0]["content"], "two");
  EXPECT_EQ(source->next(rng).text, "one");  // round and round
  auto refused = PromptSource::from_jsonl(bad, LoadApi::completions);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.error().message, HasSubstr("bad.jsonl:2"));
  EXPECT_FALSE(PromptSource::from_jsonl(good, LoadApi::completions).ok());  // line 3 has no prompt text
}

class LoadgenAgainstServe : public ::testing::Test {
 protected:
  LoadOptions options() const {
    LoadOptions o;
    o.url = "http://127.0.0.1:" + std::to_string(harness_.http_port());
    o.model = "fixture";
    o.requests = 6;
    o.warmup = 1;
    o.prompt_tokens = {10, 30};
    o.max_tokens = 9;
    o.slo_ttft_s = 60;
    return o;
  }

  void expect_all_complete(const LevelSummary& s, const LevelRun& run) {
    EXPECT_EQ(s.requests, 6u);
    EXPECT_EQ(s.errors, 0u) << s.first_error;
    for (const RequestOutcome& o : run.outcomes) {
      EXPECT_EQ(o.output_tokens, 9u);
      EXPECT_GT(o.prompt_tokens, 0u);
      EXPECT_GT(o.ttft_s, 0);
      EXPECT_LE(o.ttft_s, o.e2e_s());
    }
    EXPECT_EQ(s.output_tokens, 6u * 9u);
    EXPECT_GT(s.output_tokens_per_s, 0);
    EXPECT_DOUBLE_EQ(s.slo_attainment, 1.0);
  }

  test::ServerHarness harness_{{.n_parallel = 2, .n_ctx = 512}};
};

TEST_F(LoadgenAgainstServe, AClosedLoopLevelCompletesEveryRequest) {
  harness_.ready();
  const LoadOptions o = options();
  PromptSource prompts = PromptSource::synthetic(o, 1.3);
  const LevelRun run = run_level(o, {.kind = LoadLevel::Kind::closed, .concurrency = 3}, prompts);
  expect_all_complete(summarize(run, o), run);
  const std::string md = format_summaries({summarize(run, o)}, o, LoadFormat::md);
  EXPECT_THAT(md, HasSubstr("| c=3 | 6 | 0 |"));
}

TEST_F(LoadgenAgainstServe, AnOpenLoopLevelAndTheChatApiComplete) {
  harness_.ready();
  LoadOptions o = options();
  o.api = LoadApi::chat;
  PromptSource prompts = PromptSource::synthetic(o, 1.3);
  const LevelRun run = run_level(o, {.kind = LoadLevel::Kind::open, .rate = 50}, prompts);
  expect_all_complete(summarize(run, o), run);
}

TEST_F(LoadgenAgainstServe, RefusedRequestsAreCountedAsErrors) {
  harness_.ready();
  LoadOptions o = options();
  o.max_tokens = 100000;  // more than the context: the server answers 400
  PromptSource prompts = PromptSource::synthetic(o, 1.3);
  const LevelSummary s = summarize(run_level(o, {.kind = LoadLevel::Kind::closed, .concurrency = 1}, prompts), o);
  EXPECT_EQ(s.errors, 6u);
  EXPECT_THAT(s.first_error, HasSubstr("HTTP 400"));
}

// Streams one two-token reply per connection and closes it, while its headers promise keep-alive (llama-server's
// behaviour): a client that reuses the connection finds it dead at its next request.
class OneReplyPerConnectionServer {
 public:
  OneReplyPerConnectionServer() {
    listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    EXPECT_EQ(bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    EXPECT_EQ(listen(listen_fd_, 8), 0);
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~OneReplyPerConnectionServer() {
    shutdown(listen_fd_, SHUT_RDWR);  // ends the accept loop
    thread_.join();
    close(listen_fd_);
  }
  int port() const { return port_; }
  int connections() const { return connections_; }

 private:
  void serve() {
    for (int fd; (fd = accept(listen_fd_, nullptr, nullptr)) >= 0; close(fd)) {
      ++connections_;
      if (!read_request(fd)) continue;
      const std::string events =
          "data: {\"choices\":[{\"text\":\"a\"}]}\n\ndata: {\"choices\":[{\"text\":\"b\"}]}\n\n"
          "data: {\"choices\":[],\"usage\":{\"completion_tokens\":2,\"prompt_tokens\":3}}\n\ndata: [DONE]\n\n";
      const std::string reply = fmt::format(
          "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n"
          "Keep-Alive: timeout=5, max=100\r\n\r\n{:x}\r\n{}\r\n0\r\n\r\n",
          events.size(), events);
      EXPECT_EQ(write(fd, reply.data(), reply.size()), ssize_t(reply.size()));
      // It closes a moment later, as llama-server does: after the client sent its next request on the connection.
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  // The headers and the Content-Length bytes of body after them.
  static bool read_request(int fd) {
    std::string in;
    char buffer[4096];
    for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) > 0;) {
      in.append(buffer, size_t(n));
      const size_t end = in.find("\r\n\r\n");
      if (end == std::string::npos) continue;
      const size_t at = in.find("Content-Length: ");
      const size_t body = at == std::string::npos ? 0 : std::stoul(in.substr(at + 16));
      if (in.size() >= end + 4 + body) return true;
    }
    return false;
  }

  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<int> connections_ = 0;
  std::thread thread_;
};

TEST(Loadgen, AConnectionClosedAfterAStreamedReplyCostsNoRequest) {
  OneReplyPerConnectionServer server;
  LoadOptions o;
  o.url = fmt::format("http://127.0.0.1:{}", server.port());
  o.max_tokens = 2;
  auto client = make_client(o);
  Prompt prompt;
  prompt.text = "hello";
  for (int i = 0; i < 5; ++i) {
    const RequestOutcome r = send_streamed(*client, o, prompt);
    EXPECT_TRUE(r.ok) << "request " << i << ": " << r.error;
    EXPECT_EQ(r.output_tokens, 2u);
    EXPECT_EQ(r.chunk_gaps_s.size(), 1u);
  }
  EXPECT_EQ(server.connections(), 5);
}

}  // namespace
}  // namespace infertune
