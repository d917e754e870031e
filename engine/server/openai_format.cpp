#include "engine/server/openai_format.h"

namespace infertune {

using nlohmann::json;

std::string finish_reason_name(FinishReason reason) { return reason == FinishReason::length ? "length" : "stop"; }

std::string serialize(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

namespace {

json bytes_of(const std::string& piece) {
  json bytes = json::array();
  for (unsigned char c : piece) bytes.push_back(c);
  return bytes;
}

json chat_logprobs(const Tokenizer& tokenizer, const std::vector<GeneratedToken>& tokens) {
  json content = json::array();
  for (const GeneratedToken& t : tokens) {
    const std::string piece = tokenizer.token_to_piece(t.token);
    json top = json::array();
    for (const TokenLogprob& alt : t.top) {
      const std::string alt_piece = tokenizer.token_to_piece(alt.token);
      top.push_back({{"token", alt_piece}, {"logprob", alt.logprob}, {"bytes", bytes_of(alt_piece)}});
    }
    content.push_back({{"token", piece}, {"logprob", t.logprob}, {"bytes", bytes_of(piece)}, {"top_logprobs", top}});
  }
  return {{"content", content}};
}

json completion_logprobs(const Tokenizer& tokenizer, const std::vector<GeneratedToken>& tokens, size_t offset) {
  json pieces = json::array(), logprobs = json::array(), tops = json::array(), offsets = json::array();
  for (const GeneratedToken& t : tokens) {
    const std::string piece = tokenizer.token_to_piece(t.token);
    pieces.push_back(piece);
    logprobs.push_back(t.logprob);
    json top = json::object();
    for (const TokenLogprob& alt : t.top) top[tokenizer.token_to_piece(alt.token)] = alt.logprob;
    tops.push_back(top);
    offsets.push_back(offset);
    offset += piece.size();
  }
  return {{"tokens", pieces}, {"token_logprobs", logprobs}, {"top_logprobs", tops}, {"text_offset", offsets}};
}

json base(const ResponseHeader& h, bool chunk) {
  const bool chat = h.endpoint == Endpoint::chat;
  return {{"id", h.id},
          {"object", chat ? (chunk ? "chat.completion.chunk" : "chat.completion") : "text_completion"},
          {"created", h.created},
          {"model", h.model},
          {"system_fingerprint", "infertune"}};
}

json usage_json(const Usage& u) {
  return {{"prompt_tokens", u.prompt_tokens},
          {"completion_tokens", u.completion_tokens},
          {"total_tokens", u.prompt_tokens + u.completion_tokens}};
}

}  // namespace

json logprobs_json(Endpoint endpoint, const Tokenizer& tokenizer, const std::vector<GeneratedToken>& tokens,
                   size_t text_offset) {
  return endpoint == Endpoint::chat ? chat_logprobs(tokenizer, tokens)
                                    : completion_logprobs(tokenizer, tokens, text_offset);
}

json completion_json(const ResponseHeader& h, std::vector<CompletionChoice> choices, const Usage& usage) {
  json out = base(h, false);
  out["choices"] = json::array();
  for (size_t i = 0; i < choices.size(); ++i) {
    CompletionChoice& c = choices[i];
    json choice = {{"index", i}, {"logprobs", std::move(c.logprobs)}, {"finish_reason", finish_reason_name(c.reason)}};
    if (h.endpoint == Endpoint::chat) {
      choice["message"] = {{"role", "assistant"}, {"content", std::move(c.text)}};
      if (!c.reasoning.empty()) choice["message"]["reasoning_content"] = std::move(c.reasoning);
    } else {
      choice["text"] = std::move(c.text);
    }
    out["choices"].push_back(std::move(choice));
  }
  out["usage"] = usage_json(usage);
  return out;
}

json chunk_json(const ResponseHeader& h, size_t index, const std::string& text, std::optional<FinishReason> reason,
                bool first, json logprobs, const std::string& reasoning) {
  json out = base(h, true);
  json choice = {{"index", index},
                 {"logprobs", std::move(logprobs)},
                 {"finish_reason", reason ? json(finish_reason_name(*reason)) : json(nullptr)}};
  if (h.endpoint == Endpoint::chat) {
    json delta = json::object();
    if (first) delta["role"] = "assistant";
    if (!reason && !reasoning.empty()) delta["reasoning_content"] = reasoning;
    if (!reason && (!text.empty() || reasoning.empty())) delta["content"] = text;
    choice["delta"] = delta;
  } else {
    choice["text"] = text;
  }
  out["choices"] = json::array({choice});
  return out;
}

json usage_chunk_json(const ResponseHeader& h, const Usage& usage) {
  json out = base(h, true);
  out["choices"] = json::array();
  out["usage"] = usage_json(usage);
  return out;
}

std::string error_type_for(int status) {
  switch (status) {
    case 400:
    case 404:
    case 413:
      return "invalid_request_error";
    case 401:
      return "authentication_error";
    case 503:
      return "unavailable_error";
    default:
      return "server_error";
  }
}

json error_json(int status, std::string_view message, std::string_view type) {
  return {{"error", {{"message", message}, {"type", type}, {"param", nullptr}, {"code", status}}}};
}

}  // namespace infertune
