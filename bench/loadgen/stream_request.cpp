#include "bench/loadgen/stream_request.h"

#include <fmt/format.h>

namespace infertune {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

std::string api_path(LoadApi api) { return api == LoadApi::chat ? "/v1/chat/completions" : "/v1/completions"; }

std::unique_ptr<httplib::Client> make_client(const LoadOptions& options) {
  auto client = std::make_unique<httplib::Client>(options.url);
  client->set_keep_alive(true);
  // A request's headers and body go out as separate writes: with Nagle's algorithm the body waits for the server's
  // delayed ACK of the headers (about 40 ms on Linux) on every request of a kept-alive connection.
  client->set_tcp_nodelay(true);
  client->set_connection_timeout(10, 0);
  client->set_read_timeout(options.timeout_s, 0);
  client->set_write_timeout(options.timeout_s, 0);
  if (!options.api_key.empty()) client->set_bearer_token_auth(options.api_key);
  return client;
}

json request_body(const LoadOptions& options, const Prompt& prompt) {
  json body = {{"model", options.model},
               {"max_tokens", options.max_tokens},
               {"temperature", 0},
               {"stream", true},
               {"stream_options", {{"include_usage", true}}}};
  if (options.ignore_eos) body["ignore_eos"] = true;
  if (options.api == LoadApi::chat) {
    body["messages"] = prompt.messages;
  } else {
    body["prompt"] = prompt.text;
  }
  return body;
}

namespace {

// Reads server-sent events as they arrive: one data line at a time.
class EventReader {
 public:
  EventReader(RequestOutcome& out, LoadApi api) : out_(&out), api_(api) {}

  bool feed(const char* data, size_t n) {
    buffer_.append(data, n);
    for (size_t end; (end = buffer_.find("\n\n")) != std::string::npos;) {
      const std::string event = buffer_.substr(0, end);
      buffer_.erase(0, end + 2);
      if (event.rfind("data: ", 0) == 0) on_data(event.substr(6));
    }
    return true;
  }

  uint64_t text_chunks() const { return text_chunks_; }
  bool saw_done() const { return done_; }
  const std::string& error() const { return error_; }

 private:
  void on_data(const std::string& data) {
    if (data == "[DONE]") {
      done_ = true;
      return;
    }
    json chunk = json::parse(data, nullptr, false);
    if (chunk.is_discarded()) return;
    if (chunk.contains("error")) {
      error_ = chunk["error"].value("message", chunk["error"].dump());
      return;
    }
    if (chunk.contains("usage") && chunk["usage"].is_object()) {
      out_->output_tokens = chunk["usage"].value("completion_tokens", 0);
      out_->prompt_tokens = chunk["usage"].value("prompt_tokens", 0);
    }
    if (!chunk.contains("choices") || chunk["choices"].empty()) return;
    const json& choice = chunk["choices"][0];
    const json* text = api_ == LoadApi::chat ? (choice.contains("delta") ? &choice["delta"] : nullptr) : &choice;
    const std::string field = api_ == LoadApi::chat ? "content" : "text";
    if (!text || !text->contains(field) || !(*text)[field].is_string() || (*text)[field].get<std::string>().empty()) {
      return;
    }
    const auto now = Clock::now();
    if (text_chunks_ == 0) {
      out_->ttft_s = std::chrono::duration<double>(now - out_->start).count();
    } else {
      out_->chunk_gaps_s.push_back(std::chrono::duration<double>(now - last_).count());
    }
    last_ = now;
    ++text_chunks_;
  }

  RequestOutcome* out_;
  LoadApi api_;
  std::string buffer_;
  uint64_t text_chunks_ = 0;
  Clock::time_point last_;
  bool done_ = false;
  std::string error_;
};

}  // namespace

RequestOutcome send_streamed(httplib::Client& client, const LoadOptions& options, const Prompt& prompt) {
  RequestOutcome out;
  EventReader reader(out, options.api);
  std::string error_body;
  int status = 0;
  httplib::Request req;
  req.method = "POST";
  req.path = api_path(options.api);
  req.body = request_body(options, prompt).dump();
  req.set_header("Content-Type", "application/json");
  req.set_header("Accept", "text/event-stream");
  req.response_handler = [&status](const httplib::Response& res) {
    status = res.status;
    return true;
  };
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    if (status != 200) {
      error_body.append(data, n);
      return true;
    }
    return reader.feed(data, n);
  };
  out.start = Clock::now();
  httplib::Result result = client.send(req);
  // A server may close a kept-alive connection after a streamed reply (llama-server does, while its headers say
  // keep-alive): the next request on it fails before any reply. Nothing reached the server's handling then, so it is
  // sent once more on a new connection, timed from that send.
  if (!result && status == 0 && reader.text_chunks() == 0 && !reader.saw_done()) {
    out.start = Clock::now();
    result = client.send(req);
  }
  out.end = Clock::now();
  if (!result) {
    out.error = fmt::format("transport: {}", httplib::to_string(result.error()));
    return out;
  }
  if (status != 200) {
    out.error = fmt::format("HTTP {}: {}", status, error_body.substr(0, 300));
    return out;
  }
  if (!reader.error().empty()) {
    out.error = "stream error: " + reader.error();
    return out;
  }
  if (out.output_tokens == 0) out.output_tokens = reader.text_chunks();
  out.ok = reader.saw_done() || reader.text_chunks() > 0;
  if (!out.ok) out.error = "the stream ended without text or [DONE]";
  return out;
}

}  // namespace infertune
