#include "bench/loadgen/prompt_source.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <string_view>

#include "bench/loadgen/stream_request.h"

namespace infertune {
namespace {

// Common words that most tokenizers keep whole, so that a word is about a token.
constexpr std::array<std::string_view, 64> kWords = {
    "the",   "of",    "and",   "to",    "in",    "is",    "that",  "for",  "it",   "as",    "was",   "with",  "be",
    "by",    "on",    "not",   "he",    "this",  "are",   "or",    "his",  "from", "at",    "which", "but",   "have",
    "an",    "had",   "they",  "you",   "were",  "their", "one",   "all",  "we",   "can",   "her",   "has",   "there",
    "been",  "if",    "more",  "when",  "will",  "would", "who",   "so",   "no",   "time",  "water", "house", "river",
    "light", "small", "world", "never", "story", "night", "green", "city", "road", "music", "table", "dream"};

}  // namespace

std::string PromptSource::words(size_t count, size_t offset) {
  std::string out;
  for (size_t i = 0; i < count; ++i) {
    if (i > 0) out += ' ';
    out += kWords[(offset + i * 7) % kWords.size()];
  }
  return out;
}

PromptSource PromptSource::synthetic(const LoadOptions& options, double tokens_per_word) {
  PromptSource s;
  s.options_ = options;
  s.tokens_per_word_ = tokens_per_word > 0 ? tokens_per_word : 1.3;
  const auto prefix_words = static_cast<size_t>(
      std::lround(options.prompt_tokens.low * std::clamp(options.shared_prefix, 0.0, 1.0) / s.tokens_per_word_));
  s.shared_ = words(prefix_words, 0);
  s.shared_words_ = prefix_words;
  return s;
}

Result<PromptSource> PromptSource::from_jsonl(const std::string& path, LoadApi api) {
  std::ifstream in(path);
  if (!in) return fail("--prompts {}: cannot be read", path);
  PromptSource s;
  std::string line;
  for (size_t n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error& e) {
      return fail("{}:{}: not JSON: {}", path, n, e.what());
    }
    Prompt p;
    if (j.contains("messages") && j["messages"].is_array()) {
      p.messages = j["messages"];
    } else if (j.contains("prompt") && j["prompt"].is_string()) {
      p.text = j["prompt"].get<std::string>();
      p.messages = nlohmann::json::array({{{"role", "user"}, {"content", p.text}}});
    } else {
      return fail("{}:{}: expected {{\"prompt\": \"...\"}} or {{\"messages\": [...]}}", path, n);
    }
    if (api == LoadApi::completions && p.text.empty()) {
      return fail("{}:{}: the completions API needs a \"prompt\" string (use --api chat for messages)", path, n);
    }
    s.file_prompts_.push_back(std::move(p));
  }
  if (s.file_prompts_.empty()) return fail("--prompts {}: no prompts in it", path);
  return s;
}

Prompt PromptSource::next(std::mt19937_64& rng) {
  if (!file_prompts_.empty()) {
    const Prompt& p = file_prompts_[next_line_++ % file_prompts_.size()];
    return p;
  }
  std::uniform_int_distribution<uint32_t> length(options_.prompt_tokens.low, options_.prompt_tokens.high);
  const auto total_words = static_cast<size_t>(std::max(1.0, std::round(length(rng) / tokens_per_word_)));
  const size_t own_words = total_words > shared_words_ ? total_words - shared_words_ : 1;
  // Each request's own words are drawn at random, so prompts share nothing after the prefix.
  std::uniform_int_distribution<size_t> word(0, kWords.size() - 1);
  std::string own;
  for (size_t i = 0; i < own_words; ++i) {
    if (i > 0) own += ' ';
    own += kWords[word(rng)];
  }
  Prompt p;
  p.text = shared_.empty() ? own : shared_ + "\n" + own;
  p.messages =
      shared_.empty()
          ? nlohmann::json::array({{{"role", "user"}, {"content", own}}})
          : nlohmann::json::array({{{"role", "system"}, {"content", shared_}}, {{"role", "user"}, {"content", own}}});
  return p;
}

double server_tokens_per_word(const LoadOptions& options) {
  constexpr size_t kSample = 256;
  auto client = make_client(options);
  const std::string text = PromptSource::words(kSample, 0);
  auto res = client->Post("/tokenize", nlohmann::json{{"content", text}}.dump(), "application/json");
  if (!res || res->status != 200) return 1.3;
  const auto body = nlohmann::json::parse(res->body, nullptr, false);
  if (body.is_discarded() || !body.contains("tokens") || !body["tokens"].is_array() || body["tokens"].empty()) {
    return 1.3;
  }
  return static_cast<double>(body["tokens"].size()) / kSample;
}

}  // namespace infertune
