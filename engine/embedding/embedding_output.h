#pragma once
// What `infertune embedding` prints: the layouts of llama-embedding's --embd-output-format, spaced as it spaces
// them, so that scripts written for one read the other.
//   ''     a blank line, then "embedding N: " and values per embedding, and for several prompts their cosine
//          similarity matrix (labelled with the prompts' first characters)
//   array  [[v,...],[v,...]]
//   json   OpenAI's list: {"object": "list", "data": [{"object": "embedding", "index": N, "embedding": [...]}, ...]}
//   json+  json and "cosineSimilarity", every pair's (for several prompts)
//   raw    one embedding per line, values separated by spaces
// array, json and raw write each value in the fewest digits that read back as the same float (llama-embedding
// writes 7 decimals), so that other tools compare what the engine computed; the values of --embd-normalize 0,
// scaled to int16's range, are written as whole numbers, as llama-embedding writes them.
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/result.h"

namespace infertune {

enum class EmbeddingFormat { plain, array, json, json_plus, raw };

// "", "array", "json", "json+", "raw"; errors name --embd-output-format and the choices.
Result<EmbeddingFormat> parse_embedding_format(std::string_view name);

// sum(a*b) / (|a| |b|), summed in double; as llama.cpp's, two zero vectors are alike (1), a zero vector and another
// are not (0).
double cosine_similarity(std::span<const float> a, std::span<const float> b);

struct EmbeddingListing {
  std::vector<std::string> prompts;          // the texts embedded, in order
  std::vector<std::span<const float>> rows;  // every embedding in order: a prompt's (pooled), or a token's
  bool per_token = false;                    // --pooling none: rows are the prompts' tokens, one after another
  bool int16_scaled = false;                 // --embd-normalize 0
};

// The whole text for stdout.
std::string format_embeddings(const EmbeddingListing& listing, EmbeddingFormat format);

}  // namespace infertune
