#include "engine/server/http_server.h"

#include <fmt/format.h>
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "engine/server/completion_route.h"
#include "engine/server/embedding_route.h"
#include "engine/server/json_fields.h"
#include "engine/server/openai_format.h"

namespace infertune {

using nlohmann::json;

bool api_key_matches(std::string_view presented, const std::vector<std::string>& keys) {
  bool any = false;
  for (const std::string& key : keys) {
    // Every byte of the longer of the two is visited whatever the content, so the time says nothing about
    // how much of a guess was right.
    const size_t n = std::max(key.size(), presented.size());
    unsigned diff = key.size() == presented.size() ? 0u : 1u;
    for (size_t i = 0; i < n; ++i) {
      const auto a = static_cast<unsigned char>(i < key.size() ? key[i] : 0);
      const auto b = static_cast<unsigned char>(i < presented.size() ? presented[i] : 0);
      diff |= static_cast<unsigned>(a ^ b);
    }
    any = any || diff == 0;  // no early exit over the keys either
  }
  return any;
}

struct HttpServer::Impl {
  std::mutex mutex;
  std::condition_variable replies_done;
  int replies_in_flight = 0;
  std::atomic<bool> ready{false};
  ServedModel served;  // written once, before ready turns true
  std::atomic<uint64_t> next_id{1};

  // A token the reply holds until its provider is destroyed, after its last byte.
  std::shared_ptr<void> track_reply() {
    {
      const std::lock_guard lock(mutex);
      ++replies_in_flight;
    }
    return std::shared_ptr<void>(nullptr, [this](void*) {
      {
        const std::lock_guard lock(mutex);
        --replies_in_flight;
      }
      replies_done.notify_all();
    });
  }
};

bool HttpServer::wait_replies(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(impl_->mutex);
  return impl_->replies_done.wait_until(lock, deadline, [&] { return impl_->replies_in_flight == 0; });
}

HttpServer::HttpServer(HttpOptions options, ServerMetrics& metrics)
    : options_(std::move(options)),
      metrics_(&metrics),
      server_(std::make_unique<httplib::Server>()),
      impl_(std::make_unique<Impl>()) {
  const int threads = std::max(1, options_.threads);
  server_->new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  server_->set_payload_max_length(options_.max_body_bytes);
  // Streamed tokens are small writes, one per token: with Nagle's algorithm each waits for the client's (delayed)
  // ACK of the one before, which bunches tokens and adds up to 40 ms to a gap.
  server_->set_tcp_nodelay(true);
  server_->set_read_timeout(options_.timeout_s, 0);
  server_->set_write_timeout(options_.timeout_s, 0);
  add_routes();
}

HttpServer::~HttpServer() { stop(); }

Status HttpServer::bind() {
  port_ = options_.port == 0 ? server_->bind_to_any_port(options_.host)
                             : (server_->bind_to_port(options_.host, options_.port) ? options_.port : -1);
  if (port_ < 0) {
    return fail("cannot listen on {}:{} (the address is in use, or not one of this machine's)", options_.host,
                options_.port);
  }
  return {};
}

void HttpServer::serve() {
  serve_entered_ = true;
  if (!stop_requested_) server_->listen_after_bind();
  serve_returned_ = true;
}

void HttpServer::set_ready(ServedModel served) {
  impl_->served = std::move(served);
  impl_->ready = true;
}

void HttpServer::stop() {
  stop_requested_ = true;
  // Sequentially consistent: if serve() has not announced itself, it will see the request and not listen.
  if (!server_ || !serve_entered_) return;
  // serve() is listening, about to, or returning: wait until httplib's loop runs (or serve() is done) so that
  // httplib's stop() takes.
  while (!server_->is_running() && !serve_returned_) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  server_->stop();
}

namespace {

void send_json(httplib::Response& res, const json& body) { res.set_content(serialize(body), "application/json"); }

std::string route_label(const std::string& path) {
  if (path == "/completion" || path == "/completions") return "/completion";  // llama.cpp's own, not /v1's
  if (path == "/embedding" || path == "/embeddings") return "/embeddings";    // llama.cpp's own, not /v1's
  for (const char* known : {"/health", "/v1/models", "/v1/completions", "/v1/chat/completions", "/v1/embeddings",
                            "/tokenize", "/detokenize", "/apply-template", "/metrics", "/slots", "/props"}) {
    const std::string_view k(known);
    if (path == k || (k.starts_with("/v1/") && path == k.substr(3))) return std::string(k);
  }
  return "other";
}

std::string presented_key(const httplib::Request& req) {
  const std::string auth = req.get_header_value("Authorization");
  constexpr std::string_view kBearer = "Bearer ";
  if (auth.size() > kBearer.size() && std::string_view(auth).substr(0, kBearer.size()) == kBearer) {
    return auth.substr(kBearer.size());
  }
  return req.get_header_value("X-Api-Key");
}

}  // namespace

void HttpServer::add_routes() {
  Impl& impl = *impl_;
  const HttpOptions& options = options_;
  ServerMetrics& metrics = *metrics_;

  server_->set_pre_routing_handler([&impl, &options](const httplib::Request& req, httplib::Response& res) {
    using R = httplib::Server::HandlerResponse;
    if (req.path == "/health") return R::Unhandled;
    if (!options.api_keys.empty() && !api_key_matches(presented_key(req), options.api_keys)) {
      send_error(res, 401, "invalid or missing API key (send it as 'Authorization: Bearer KEY')");
      return R::Handled;
    }
    if (!impl.ready) {
      send_error(res, 503, "the model is loading");
      res.set_header("Retry-After", "1");
      return R::Handled;
    }
    return R::Unhandled;
  });
  server_->set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    const std::string message = res.status == 404   ? fmt::format("no route {} {}", req.method, req.path)
                                : res.status == 413 ? "the request body is larger than the server accepts"
                                                    : fmt::format("HTTP {}", res.status);
    send_error(res, res.status, message);
  });
  server_->set_logger([&metrics](const httplib::Request& req, const httplib::Response& res) {
    metrics.request_finished(route_label(req.path), res.status);
  });

  server_->Get("/health", [&impl](const httplib::Request&, httplib::Response& res) {
    if (!impl.ready) {
      send_error(res, 503, "the model is loading");
      return;
    }
    send_json(res, {{"status", "ok"}});
  });

  const auto models = [&impl, &options](const httplib::Request&, httplib::Response& res) {
    const ModelConfig& c = impl.served.model->config();
    send_json(res, {{"object", "list"},
                    {"data", json::array({{{"id", options.alias},
                                           {"object", "model"},
                                           {"created", 0},
                                           {"owned_by", "infertune"},
                                           {"meta",
                                            {{"n_vocab", c.n_vocab},
                                             {"n_ctx_train", c.n_ctx_train},
                                             {"n_embd", c.n_embd},
                                             {"n_ctx", impl.served.limits.n_ctx},
                                             {"size", impl.served.model->tensor_bytes()}}}}})}});
  };
  server_->Get("/v1/models", models);
  server_->Get("/models", models);

  for (const auto& [path, endpoint] :
       {std::pair{"/v1/completions", Endpoint::completions}, std::pair{"/v1/chat/completions", Endpoint::chat},
        std::pair{"/chat/completions", Endpoint::chat}, std::pair{"/completion", Endpoint::native},
        std::pair{"/completions", Endpoint::native}}) {
    server_->Post(path, [&impl, &options, endpoint](const httplib::Request& req, httplib::Response& res) {
      answer_completion({&impl.served, &options, &impl.next_id, impl.track_reply()}, endpoint, req, res);
    });
  }

  for (const auto& [path, format] :
       {std::pair{"/v1/embeddings", EmbeddingFormat::openai}, std::pair{"/embeddings", EmbeddingFormat::native},
        std::pair{"/embedding", EmbeddingFormat::native}}) {
    server_->Post(path, [&impl, &options, format](const httplib::Request& req, httplib::Response& res) {
      answer_embeddings(impl.served, options, format, impl.track_reply(), req, res);
    });
  }

  server_->Post("/tokenize", [&impl](const httplib::Request& req, httplib::Response& res) {
    auto body = json_body(req);
    if (!body) return send_error(res, 400, body.error().message);
    if (!body->contains("content") || !(*body)["content"].is_string()) {
      return send_error(res, 400, "content must be a string");
    }
    const auto add_special = bool_field(*body, "add_special", false);
    if (!add_special) return send_error(res, 400, add_special.error().message);
    const auto with_pieces = bool_field(*body, "with_pieces", false);
    if (!with_pieces) return send_error(res, 400, with_pieces.error().message);
    const Tokenizer& tok = *impl.served.tokenizer;
    const std::vector<int32_t> ids = tok.encode((*body)["content"].get<std::string>(), *add_special, true);
    json tokens = json::array();
    for (int32_t id : ids) {
      if (*with_pieces) {
        tokens.push_back({{"id", id}, {"piece", tok.token_to_piece(id)}});
      } else {
        tokens.push_back(id);
      }
    }
    send_json(res, {{"tokens", tokens}});
  });

  server_->Post("/detokenize", [&impl](const httplib::Request& req, httplib::Response& res) {
    auto body = json_body(req);
    if (!body) return send_error(res, 400, body.error().message);
    const auto it = body->find("tokens");
    if (it == body->end() || !it->is_array()) return send_error(res, 400, "tokens must be an array of token ids");
    std::vector<int32_t> ids;
    const int64_t n_vocab = impl.served.tokenizer->n_vocab();
    for (size_t i = 0; i < it->size(); ++i) {
      const json& t = (*it)[i];
      if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() >= n_vocab) {
        return send_error(res, 400,
                          fmt::format("tokens[{}] must be a token id in [0, {}), got {}", i, n_vocab, shown(t)));
      }
      ids.push_back(static_cast<int32_t>(t.get<int64_t>()));
    }
    send_json(res, {{"content", impl.served.tokenizer->decode(ids)}});
  });

  server_->Post("/apply-template", [&impl](const httplib::Request& req, httplib::Response& res) {
    auto body = json_body(req);
    if (!body) return send_error(res, 400, body.error().message);
    auto request = parse_completion_request(*body, Endpoint::chat, impl.served.limits);
    if (!request) return send_error(res, 400, request.error().message);
    const auto add_generation_prompt = bool_field(*body, "add_generation_prompt", true);
    if (!add_generation_prompt) return send_error(res, 400, add_generation_prompt.error().message);
    auto prompt = render_chat(impl.served, request->messages, *add_generation_prompt, request->template_options);
    if (!prompt) return send_error(res, 400, prompt.error().message);
    send_json(res, {{"prompt", *prompt}, {"template", impl.served.chat_template->name()}});
  });

  server_->Get("/slots", [&impl, &options](const httplib::Request& req, httplib::Response& res) {
    if (!options.slots)
      return send_error(res, 501, "the slots endpoint is off (the server was started with --no-slots)");
    const std::vector<SlotState> slots = impl.served.loop->slots();
    const bool all_busy =
        std::all_of(slots.begin(), slots.end(), [](const SlotState& s) { return s.running.has_value(); });
    if (req.get_param_value("fail_on_no_slot") == "1" && all_busy) {
      res.set_header("Retry-After", "1");
      return send_error(res, 503, "no slot available");
    }
    send_json(res, slots_json(slots, impl.served.limits));
  });

  server_->Get("/props", [&impl, &options](const httplib::Request&, httplib::Response& res) {
    const ServerEndpoints endpoints{.model_alias = options.alias, .slots = options.slots, .metrics = options.metrics};
    send_json(res, props_json(impl.served.props, endpoints, impl.served.limits));
  });

  server_->Get("/metrics", [&options, &metrics](const httplib::Request&, httplib::Response& res) {
    if (!options.metrics) return send_error(res, 501, "metrics are off (start the server with --metrics)");
    res.set_content(metrics.exposition(), "text/plain; version=0.0.4");
  });
}

}  // namespace infertune
