#pragma once
// Picking a sequence's next token under its constraints: end tokens banned (llama.cpp's ignore_eos) and a grammar
// (llama.cpp's --grammar, --json-schema). The chain picks from the row; a grammar is asked about that token first
// and masks the whole vocabulary only when it refuses it, as llama.cpp's sampler does, so most steps of a
// constrained reply cost one check. Shared by the scheduler and `run`.
#include <cstdint>
#include <span>
#include <vector>

#include "engine/grammar/token_grammar.h"
#include "engine/sampling/sampler_chain.h"
#include "kernels/result.h"

namespace infertune {

struct SamplingConstraints {
  TokenGrammar* grammar = nullptr;  // optional; advanced by the token picked
  bool ban_end_tokens = false;      // ignore_eos: lifted when the grammar's sentence is finished and nothing can follow
};

class ConstrainedSampling {
 public:
  explicit ConstrainedSampling(std::vector<int32_t> end_tokens) : end_tokens_(std::move(end_tokens)) {}

  // The next token; the chain and the grammar take it. A grammar that allows no token of this vocabulary (a dead
  // end) gives the first end token, which ends the sequence. Errors when nothing can be chosen at all.
  Result<int32_t> pick(SamplerChain& chain, std::span<const float> row, const SamplingConstraints& constraints);

  // Whether `token` is one of the end tokens (a sampled one ends the sequence).
  bool is_end_token(int32_t token) const;

 private:
  std::vector<int32_t> end_tokens_;
  std::vector<float> masked_row_;  // a row with refused tokens at -inf
};

}  // namespace infertune
