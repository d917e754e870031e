#pragma once
// The replies of llama.cpp's own POST /completion, in the shapes of the llama-server infertune is compared with:
//   streamed: one event per token, {"index", "content", "tokens" (the token's id), "stop": false,
//             "id_slot": -1, "tokens_predicted", "tokens_evaluated"}, then the final object with "content": ""
//             (no "data: [DONE]");
//   whole:    the final object with all the text: "content", "tokens" (the generated ids with return_tokens,
//             [] without), "id_slot" (the slot that ran it), "stop": true,
//             "model", "tokens_predicted", "tokens_evaluated", "generation_settings", "prompt", "truncated",
//             "stop_type" (eos, limit, word, none), "stopping_word", "tokens_cached", "timings" {cache_n, prompt_n,
//             prompt_ms, prompt_per_token_ms, prompt_per_second, predicted_n, predicted_ms, predicted_per_token_ms,
//             predicted_per_second}, and "completion_probabilities" when n_probs asked for them.
// prompt_ms counts from the start of the step that gave the request a slot to its first token (a wait for a slot
// left out, as llama-server's); predicted_ms from the first token to the last.
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/server/serving_loop.h"
#include "engine/tokenizer/tokenizer.h"

namespace infertune {

struct NativeTimings {
  uint32_t cache_n = 0;   // prompt tokens found in the cache
  uint32_t prompt_n = 0;  // prompt tokens computed
  double prompt_ms = 0;
  uint32_t predicted_n = 0;
  double predicted_ms = 0;
};

// What the final object says of the request.
struct NativeSummary {
  std::string model;
  std::string prompt_text;  // the prompt's tokens as text, special ones included ("<s> Once upon a time")
  uint32_t tokens_predicted = 0;
  uint32_t tokens_evaluated = 0;  // the prompt's tokens
  FinishReason reason = FinishReason::stop;
  std::optional<std::string> stopping_word;  // the stop string that ended it
  int32_t id_slot = -1;                      // the slot that ran it
  std::vector<int32_t> tokens;               // the generated ids, when return_tokens asked for them
  NativeTimings timings;
  nlohmann::json generation_settings;  // the request's sampling (monitoring_routes.h's params)
  size_t index = 0;                    // of the completion among the request's (several prompts)
};

// One streamed event of completion `index`.
nlohmann::json native_chunk_json(size_t index, const std::string& text, std::span<const int32_t> tokens,
                                 uint32_t tokens_predicted, uint32_t tokens_evaluated, nlohmann::json probabilities);

// The final object: `content` is the whole text (non-streamed) or "" (the last streamed event).
nlohmann::json native_final_json(const std::string& content, const NativeSummary& summary,
                                 nlohmann::json probabilities);

// llama-server's completion_probabilities: per token {id, token, bytes, logprob, top_logprobs: [{id, token, bytes,
// logprob}]}; null when none were asked for.
nlohmann::json native_probabilities_json(const Tokenizer& tokenizer, const std::vector<GeneratedToken>& tokens);

}  // namespace infertune
