#pragma once
// The body of a /v1/completions or /v1/chat/completions request, parsed and checked: every field the server
// reads is type-checked and bounded, and a bad one is an error naming it ("temperature must be a number in
// [0, 2], got 7"), which the server answers with 400. Fields the server does not use are ignored, as
// OpenAI-compatible servers do (clients send user, tools, ...). llama.cpp's names are accepted beside OpenAI's:
// n_predict for max_tokens, n_probs for logprobs, and its ignore_eos, cache_prompt and return_tokens; a reply is
// constrained by grammar, json_schema or response_format (output_constraint.h).
#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/grammar/grammar.h"
#include "engine/sampling/sampling_params.h"
#include "engine/server/chat_template.h"
#include "engine/server/reasoning_split.h"
#include "kernels/result.h"

namespace infertune {

// OpenAI's /v1/completions and /v1/chat/completions, and llama.cpp's own POST /completion (native_format.h),
// which takes the completions body with llama.cpp's names (n_predict, n_probs) and answers in llama-server's shape.
enum class Endpoint { completions, chat, native };

// What the parser needs to know of the server.
struct RequestLimits {
  uint32_t n_ctx = 4096;                     // max_tokens can be at most this
  uint32_t n_vocab = 0;                      // token ids in a prompt array must be below this
  SamplingParams defaults{};                 // the server's sampling flags: what an absent field means
  std::optional<uint32_t> max_tokens{};      // the server's -n; absent: until end of generation or a full context
  std::shared_ptr<const Grammar> grammar{};  // the server's --grammar / --json-schema: for requests that bring none
  ReasoningFormat reasoning_format = ReasoningFormat::deepseek;  // the server's --reasoning-format
  ChatRenderOptions template_options{};  // the server's --chat-template-kwargs ('{"enable_thinking": false}')
};

inline constexpr size_t kMaxPrompts = 64;  // completions to generate for one request: prompts x n
inline constexpr size_t kMaxStopStrings = 16;
inline constexpr size_t kMaxStopBytes = 1024;
inline constexpr uint32_t kMaxTopLogprobs = 20;

// One prompt of a completions request: text, or token ids.
struct CompletionPrompt {
  std::string text;             // when tokens is empty
  std::vector<int32_t> tokens;  // a prompt given as token ids
};

struct CompletionRequest {
  Endpoint endpoint = Endpoint::completions;
  // completions: one or more (a "prompt" array of strings or of id arrays: a completion for each, as OpenAI's and
  // llama-server's do)
  std::vector<CompletionPrompt> prompts;
  std::vector<ChatMessage> messages;   // chat
  uint32_t n = 1;                      // completions per prompt (OpenAI's n)
  std::optional<uint32_t> max_tokens;  // absent: until end of generation or a full context
  SamplingParams sampling;
  std::vector<std::string> stop;
  bool stream = false;
  bool include_usage = false;            // stream_options.include_usage: a last chunk with the usage
  std::optional<uint32_t> top_logprobs;  // set: log-probabilities of the chosen and this many top tokens
  bool ignore_eos = false;               // llama.cpp's: never sample an end token (fixed-length benchmarks)
  bool cache_prompt = true;              // llama.cpp's: false computes the whole prompt, cached or not
  bool return_tokens = false;            // llama.cpp's /completion: the generated ids in the final object
  // grammar, json_schema or response_format (output_constraint.h): the reply is a sentence of this grammar
  std::shared_ptr<const Grammar> grammar{};
  // chat: llama-server's reasoning_format, whether a reply's <think> part goes to reasoning_content
  ReasoningFormat reasoning_format = ReasoningFormat::deepseek;
  // chat: chat_template_kwargs (enable_thinking false opens the reply with an empty thought where the template has
  // that switch, Qwen3's; reasoning_effort sets gpt-oss's), or the OpenAI field reasoning_effort
  ChatRenderOptions template_options{};
};

// chat_template_kwargs (a request's, or the server's --chat-template-kwargs): an object whose enable_thinking, when
// given, must be a boolean and whose reasoning_effort low, medium or high; other keys are left to templates that
// would read them, as llama-server leaves them. What is not given keeps `fallback`'s value. Errors name `field`.
Result<ChatRenderOptions> parse_chat_template_kwargs(const nlohmann::json& kwargs, std::string_view field,
                                                     const ChatRenderOptions& fallback);

// A "prompt" (or an embedding request's "input"): a string, an array of token ids, or an array of up to
// `max_prompts` of those. Errors name `field` ("input[2] must not be empty").
Result<std::vector<CompletionPrompt>> parse_prompts(const nlohmann::json& value, std::string_view field,
                                                    const RequestLimits& limits, size_t max_prompts);

// `raw_body`: the text `body` was parsed from, which keeps a JSON schema's property order (output_constraint.h).
Result<CompletionRequest> parse_completion_request(const nlohmann::json& body, Endpoint endpoint,
                                                   const RequestLimits& limits, std::string_view raw_body = {});

}  // namespace infertune
