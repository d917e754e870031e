#include "engine/server/embedding_route.h"

#include <chrono>

#include "engine/server/base64.h"
#include "engine/server/completion_route.h"
#include "engine/server/json_fields.h"
#include "engine/server/openai_format.h"

namespace infertune {
namespace {

using nlohmann::json;

struct EmbeddingRequest {
  EmbeddingFormat format = EmbeddingFormat::openai;
  std::vector<std::vector<int32_t>> inputs{};
  bool base64 = false;
  int normalize = kEuclideanNorm;
  std::string model{};  // the request's "model", echoed as OpenAI's API does
};

Result<std::vector<std::vector<int32_t>>> input_tokens(const ServedModel& served, const json& value,
                                                       std::string_view field, uint32_t max_tokens) {
  auto prompts = parse_prompts(value, field, served.limits, kMaxEmbeddingInputs);
  if (!prompts) return prompts.error();
  std::vector<std::vector<int32_t>> out;
  for (size_t i = 0; i < prompts->size(); ++i) {
    CompletionPrompt& p = (*prompts)[i];
    const std::string name = prompt_name(prompts->size(), i, field);
    if (p.tokens.empty()) {
      auto encoded = tokens_of_text(served, p.text, name);
      if (!encoded) return encoded.error();
      p.tokens = std::move(*encoded);
    }
    std::vector<int32_t> ids = std::move(p.tokens);
    if (ids.size() > max_tokens) {
      return fail(
          "{} has {} tokens; an input may have at most {} tokens (serve -b sets it; -ub for a bidirectional "
          "model)",
          name, ids.size(), max_tokens);
    }
    out.push_back(std::move(ids));
  }
  return out;
}

Result<EmbeddingRequest> parse_embedding_request(const ServedModel& served, EmbeddingFormat format,
                                                 const httplib::Request& req) {
  auto body = json_body(req);
  if (!body) return body.error();
  EmbeddingRequest r{.format = format};
  const char* field = body->contains("input") ? "input" : "content";
  if (!body->contains(field) || (*body)[field].is_null()) return fail("input (or content) is required");
  if (std::string_view(field) == "content") r.format = EmbeddingFormat::native;  // as llama-server answers it
  if (r.format == EmbeddingFormat::openai && served.loop->embeddings()->pooling() == Pooling::none) {
    return fail(
        "the server pools nothing (--pooling none: a vector per token), which OpenAI's format cannot carry: "
        "start it with --pooling mean, cls or last, or ask /embeddings with \"content\"");
  }
  auto inputs = input_tokens(served, (*body)[field], field, served.loop->embeddings()->max_input_tokens());
  if (!inputs) return inputs.error();
  r.inputs = std::move(*inputs);
  if (const auto it = body->find("encoding_format"); it != body->end() && !it->is_null()) {
    if (*it != "float" && *it != "base64") {
      return fail("encoding_format must be \"float\" or \"base64\", got {}", shown(*it));
    }
    r.base64 = *it == "base64";
  }
  auto normalize = integer_field(*body, "embd_normalize", -1, 64);
  if (!normalize) return normalize.error();
  r.normalize = static_cast<int>(normalize->value_or(kEuclideanNorm));
  if (const auto it = body->find("model"); it != body->end() && it->is_string()) r.model = it->get<std::string>();
  return r;
}

json float_row(std::span<const float> row) { return json(std::vector<float>(row.begin(), row.end())); }

json openai_embeddings_json(const EmbeddingRequest& r, const std::vector<Embedding>& vectors,
                            const std::string& alias) {
  json data = json::array();
  size_t n_tokens = 0;
  for (size_t i = 0; i < vectors.size(); ++i) {
    const std::span<const float> row = vectors[i].row(0);
    json item = {{"object", "embedding"}, {"index", i}};
    if (r.base64) {
      item["embedding"] = base64_encode(std::as_bytes(row));
      item["encoding_format"] = "base64";
    } else {
      item["embedding"] = float_row(row);
    }
    data.push_back(std::move(item));
    n_tokens += r.inputs[i].size();
  }
  return {{"object", "list"},
          {"data", std::move(data)},
          {"model", r.model.empty() ? alias : r.model},
          {"usage", {{"prompt_tokens", n_tokens}, {"total_tokens", n_tokens}}}};
}

json native_embeddings_json(const std::vector<Embedding>& vectors) {
  json out = json::array();
  for (size_t i = 0; i < vectors.size(); ++i) {
    json rows = json::array();
    for (size_t k = 0; k < vectors[i].n_rows(); ++k) rows.push_back(float_row(vectors[i].row(k)));
    out.push_back({{"index", i}, {"embedding", std::move(rows)}});
  }
  return out;
}

json reply_json(const EmbeddingRequest& r, const std::vector<Embedding>& vectors, const std::string& alias) {
  return r.format == EmbeddingFormat::openai ? openai_embeddings_json(r, vectors, alias)
                                             : native_embeddings_json(vectors);
}

bool write_when_done(EmbeddingTicket& ticket, const EmbeddingRequest& request, const HttpOptions& options,
                     httplib::DataSink& sink) {
  for (;;) {
    auto done = ticket.wait(options.keep_alive);
    if (done) {
      const std::string body = *done ? serialize(reply_json(request, **done, options.alias))
                                     : serialize(error_json(500, done->error().message, error_type_for(500)));
      sink.write(body.data(), body.size());
      sink.done();
      return true;
    }
    if (!sink.write(" ", 1)) {
      ticket.cancel();
      return false;
    }
  }
}

}  // namespace

void answer_embeddings(const ServedModel& served, const HttpOptions& options, EmbeddingFormat format,
                       std::shared_ptr<void> reply_in_flight, const httplib::Request& req, httplib::Response& res) {
  if (!served.loop->embeddings()) {
    return send_error(res, 501, "this server does not compute embeddings: start it with --embeddings");
  }
  auto request = parse_embedding_request(served, format, req);
  if (!request) return send_error(res, 400, request.error().message);
  auto submitted = served.loop->submit_embeddings({.inputs = request->inputs, .normalize = request->normalize});
  if (!submitted.ticket) {
    res.set_header("Retry-After", "1");
    return send_error(res, 503,
                      submitted.refusal == ServingLoop::Refusal::queue_full
                          ? "the server is busy: the embedding queue is full; retry later"
                          : "the server is shutting down");
  }
  // A quick result gets its status (200, or 500 when the loop failed). A longer one (many inputs, a busy
  // loop) is answered in chunks: a space every keep-alive period until the body (JSON allows leading whitespace),
  // so that a client that went away is noticed and its request dropped.
  auto done = submitted.ticket->wait(options.keep_alive);
  if (done) {
    if (!*done) return send_error(res, 500, done->error().message);
    return res.set_content(serialize(reply_json(*request, **done, options.alias)), "application/json");
  }
  auto ticket = submitted.ticket;
  res.set_chunked_content_provider(
      "application/json",
      [ticket, request = std::move(*request), &options, reply_in_flight](size_t, httplib::DataSink& sink) {
        return write_when_done(*ticket, request, options, sink);
      },
      [ticket](bool) { ticket->cancel(); });
}

}  // namespace infertune
