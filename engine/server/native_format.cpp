#include "engine/server/native_format.h"

namespace infertune {
namespace {

using nlohmann::json;

std::string stop_type(const NativeSummary& s) {
  if (s.stopping_word) return "word";
  switch (s.reason) {
    case FinishReason::stop:
      return "eos";
    case FinishReason::length:
      return "limit";
    case FinishReason::cancelled:
    case FinishReason::error:
      return "none";
  }
  return "none";
}

double per_token_ms(double ms, uint32_t n) { return n == 0 ? 0.0 : ms / n; }
double per_second(double ms, uint32_t n) { return ms <= 0 ? 0.0 : 1000.0 * n / ms; }

json timings_json(const NativeTimings& t) {
  return {{"cache_n", t.cache_n},
          {"prompt_n", t.prompt_n},
          {"prompt_ms", t.prompt_ms},
          {"prompt_per_token_ms", per_token_ms(t.prompt_ms, t.prompt_n)},
          {"prompt_per_second", per_second(t.prompt_ms, t.prompt_n)},
          {"predicted_n", t.predicted_n},
          {"predicted_ms", t.predicted_ms},
          {"predicted_per_token_ms", per_token_ms(t.predicted_ms, t.predicted_n)},
          {"predicted_per_second", per_second(t.predicted_ms, t.predicted_n)}};
}

json token_json(const Tokenizer& tokenizer, int32_t id, float logprob) {
  const std::string piece = tokenizer.token_to_piece(id);
  json bytes = json::array();
  for (unsigned char c : piece) bytes.push_back(c);
  return {{"id", id}, {"token", piece}, {"bytes", bytes}, {"logprob", logprob}};
}

}  // namespace

json native_chunk_json(size_t index, const std::string& text, std::span<const int32_t> tokens,
                       uint32_t tokens_predicted, uint32_t tokens_evaluated, json probabilities) {
  json out = {{"index", index},
              {"content", text},
              {"tokens", json(std::vector<int32_t>(tokens.begin(), tokens.end()))},
              {"stop", false},
              {"id_slot", -1},
              {"tokens_predicted", tokens_predicted},
              {"tokens_evaluated", tokens_evaluated}};
  if (!probabilities.is_null()) out["completion_probabilities"] = std::move(probabilities);
  return out;
}

json native_final_json(const std::string& content, const NativeSummary& s, json probabilities) {
  json out = {{"index", s.index},
              {"content", content},
              {"tokens", s.tokens},
              {"id_slot", s.id_slot},
              {"stop", true},
              {"model", s.model},
              {"tokens_predicted", s.tokens_predicted},
              {"tokens_evaluated", s.tokens_evaluated},
              {"generation_settings", s.generation_settings},
              {"prompt", s.prompt_text},
              {"has_new_line", content.find('\n') != std::string::npos},
              {"truncated", false},
              {"stop_type", stop_type(s)},
              {"stopping_word", s.stopping_word.value_or("")},
              // The slot's cached tokens: the last one generated was never decoded.
              {"tokens_cached", s.tokens_evaluated + s.tokens_predicted - (s.tokens_predicted > 0 ? 1 : 0)},
              {"timings", timings_json(s.timings)}};
  if (!probabilities.is_null()) out["completion_probabilities"] = std::move(probabilities);
  return out;
}

json native_probabilities_json(const Tokenizer& tokenizer, const std::vector<GeneratedToken>& tokens) {
  json out = json::array();
  for (const GeneratedToken& t : tokens) {
    json entry = token_json(tokenizer, t.token, t.logprob);
    json top = json::array();
    for (const TokenLogprob& alt : t.top) top.push_back(token_json(tokenizer, alt.token, alt.logprob));
    entry["top_logprobs"] = std::move(top);
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace infertune
