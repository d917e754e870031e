#pragma once
// The JSON the server answers with, in the OpenAI API's shapes: completion and chat completion objects,
// their streamed chunks, usage, log-probabilities (chat: logprobs.content; completions: the legacy
// tokens / token_logprobs / top_logprobs / text_offset arrays) and error bodies. Text is UTF-8 as generated;
// serialize() replaces bytes that are not valid UTF-8 (a character cut at the end of a stopped stream) so
// that no reply fails to encode.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/server/completion_request.h"
#include "engine/server/serving_loop.h"
#include "engine/tokenizer/tokenizer.h"

namespace infertune {

struct Usage {
  uint64_t prompt_tokens = 0;
  uint64_t completion_tokens = 0;
};

// What every object of one response shares.
struct ResponseHeader {
  Endpoint endpoint = Endpoint::completions;
  std::string id;  // "cmpl-..." / "chatcmpl-..."
  int64_t created = 0;
  std::string model;
};

std::string finish_reason_name(FinishReason reason);  // "stop", "length"; cancelled and error: "stop"

// Log-probabilities of the tokens of one response (or one chunk), in the endpoint's shape; null when none.
nlohmann::json logprobs_json(Endpoint endpoint, const Tokenizer& tokenizer, const std::vector<GeneratedToken>& tokens,
                             size_t text_offset);

// One choice of a whole response.
struct CompletionChoice {
  std::string text;
  std::string reasoning;  // chat: message.reasoning_content (reasoning_split.h), left out when empty
  FinishReason reason = FinishReason::stop;
  nlohmann::json logprobs;  // null when none were asked for
};

// The whole (non-streamed) response: its choices in order (a choice's index is its position).
nlohmann::json completion_json(const ResponseHeader& h, std::vector<CompletionChoice> choices, const Usage& usage);

// One streamed chunk of choice `index`: a text delta (chat: the first one also carries the role, and `reasoning` is
// delta.reasoning_content, where content is left out when it is empty), or the last one with its finish_reason (reason
// set, text empty).
nlohmann::json chunk_json(const ResponseHeader& h, size_t index, const std::string& text,
                          std::optional<FinishReason> reason, bool first, nlohmann::json logprobs,
                          const std::string& reasoning = {});
// The chunk stream_options.include_usage asks for at the end: no choices, the usage.
nlohmann::json usage_chunk_json(const ResponseHeader& h, const Usage& usage);

// {"error": {"message", "type", "param", "code"}}.
nlohmann::json error_json(int status, std::string_view message, std::string_view type);
std::string error_type_for(int status);  // 400 invalid_request_error, 401 authentication_error, ...

std::string serialize(const nlohmann::json& j);

}  // namespace infertune
