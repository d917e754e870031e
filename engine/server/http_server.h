#pragma once
// The HTTP side of `infertune serve` (cpp-httplib): OpenAI-compatible routes over a ServingLoop.
//
//   GET  /health                   200 {"status":"ok"}, 503 while the model loads (no API key needed)
//   GET  /v1/models                the served model (its alias)
//   POST /v1/completions           prompt text or token ids; "stream": true for server-sent events
//   POST /v1/chat/completions      messages rendered with the model's chat template (chat_template.h)
//   POST /completion               llama.cpp's own completion API (native_format.h); /completions too, as in
//                                  llama-server
//   POST /v1/embeddings            with --embeddings: a vector per input (embedding_route.h); /embeddings and
//                                  /embedding answer in llama-server's own shape
//   POST /tokenize, /detokenize    {"content": ...} <-> {"tokens": [...]}
//   POST /apply-template           {"messages": [...]} -> {"prompt": ...}: the text a chat request runs
//   GET  /metrics                  Prometheus text (with --metrics)
//   GET  /slots                    each slot's request and progress (monitoring_routes.h; off with --no-slots);
//                                  ?fail_on_no_slot=1: 503 when every slot is busy
//   GET  /props                    the server's defaults, slots, model path and chat template
// /v1/models and /v1/chat/completions are also served without the prefix, as llama-server does (its
// /completions is its own API, not OpenAI's).
//
// Every route but /health needs the API key when one is set (Authorization: Bearer KEY, compared in
// constant time; 401 otherwise). Bodies over the size limit get 413, bad JSON or fields 400 naming the field,
// a full queue or a draining server 503 with Retry-After. A client that goes away is noticed at the next
// write (streamed tokens, or a keep-alive written every second while it waits) and its request cancelled,
// which frees its KV cells.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/model/model.h"
#include "engine/server/chat_template.h"
#include "engine/server/completion_request.h"
#include "engine/server/monitoring_routes.h"
#include "engine/server/server_metrics.h"
#include "engine/server/serving_loop.h"
#include "engine/tokenizer/tokenizer.h"
#include "kernels/result.h"

namespace httplib {
class Server;
}

namespace infertune {

struct HttpOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                             // 0: any free port (port() says which)
  std::vector<std::string> api_keys{};         // empty: no key needed
  std::string alias{};                         // the model's name in replies and /v1/models
  bool metrics = false;                        // serve /metrics
  bool slots = true;                           // serve /slots
  int timeout_s = 600;                         // read and write timeout of a connection
  int threads = 8;                             // HTTP worker threads (each holds one request while it runs)
  size_t max_body_bytes = 8u << 20;            // larger bodies get 413
  std::chrono::milliseconds keep_alive{1000};  // how often a waiting client's connection is probed
};

// What the routes serve once the model is ready.
struct ServedModel {
  const Model* model = nullptr;
  const Tokenizer* tokenizer = nullptr;
  ServingLoop* loop = nullptr;
  std::optional<ChatTemplate> chat_template;  // absent: chat requests get 400 with the reason
  std::string chat_template_error;            // why there is none
  RequestLimits limits;
  ServerProps props;                // what GET /props says beyond the limits
  std::string completions_refused;  // why completions and chat get 501 (a bidirectional model); empty: served
};

class HttpServer {
 public:
  HttpServer(HttpOptions options, ServerMetrics& metrics);
  ~HttpServer();

  // Binds the address (an error names it when it cannot), so that /health answers while the model loads.
  Status bind();
  int port() const { return port_; }
  // Serves on the calling thread until stop(); returns at once when stop() came first.
  void serve();
  // The model is ready: the routes answer from now on.
  void set_ready(ServedModel served);
  // Waits until every streamed or chunked reply has been written to its end (a draining server stops only
  // then, so that a finished request's last chunks and [DONE] reach the client); true when none is left.
  bool wait_replies(std::chrono::steady_clock::time_point deadline);
  // Ends serve(), from any thread, whether or not it has started listening yet.
  void stop();

 private:
  void add_routes();
  struct Impl;
  HttpOptions options_;
  ServerMetrics* metrics_;
  std::unique_ptr<httplib::Server> server_;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
  // httplib's stop() does nothing before its listen loop runs, so a stop that comes while serve() is still
  // starting (a model that fails to load at once) would leave it listening forever: serve() and stop() each
  // announce themselves before looking at the other (see stop()).
  std::atomic<bool> serve_entered_{false};
  std::atomic<bool> serve_returned_{false};
  std::atomic<bool> stop_requested_{false};
};

// Constant-time equality of a presented key and the configured ones (the time does not depend on where
// the bytes differ).
bool api_key_matches(std::string_view presented, const std::vector<std::string>& keys);

}  // namespace infertune
