#pragma once
// The prompts loadgen sends: synthetic ones of a given length in tokens (common English words, with a shared
// prefix of a set fraction: the system prompt several users have in common), or the lines of a JSONL file.
// Synthetic lengths are in the server's tokens when it answers /tokenize (the words-per-token ratio is
// measured once), else estimated at 1.3 tokens per word.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "bench/loadgen/load_options.h"
#include "kernels/result.h"

namespace infertune {

struct Prompt {
  std::string text;         // completions
  nlohmann::json messages;  // chat: [{"role": ..., "content": ...}]
};

// Tokens per word of the synthetic prompts' words in the server's tokenizer (its /tokenize), or the usual 1.3 when
// the server does not answer it.
double server_tokens_per_word(const LoadOptions& options);

class PromptSource {
 public:
  // tokens_per_word: what the server's tokenizer makes of the word list (server_tokens_per_word measures it).
  static PromptSource synthetic(const LoadOptions& options, double tokens_per_word);
  // One prompt per line: {"prompt": "..."} or {"messages": [...]}; errors name the line.
  static Result<PromptSource> from_jsonl(const std::string& path, LoadApi api);

  // The next prompt (synthetic: drawn with `rng`; from a file: the lines in turn, round and round).
  Prompt next(std::mt19937_64& rng);

  // A text of `words` words from the list, starting at word `offset`.
  static std::string words(size_t count, size_t offset);

 private:
  LoadOptions options_;
  double tokens_per_word_ = 1.3;
  std::vector<Prompt> file_prompts_;
  size_t next_line_ = 0;
  std::string shared_;  // the shared prefix's words
  size_t shared_words_ = 0;
};

}  // namespace infertune
