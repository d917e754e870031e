#pragma once
// How bench's tests feed a Context: random token ids (a fixed seed, so every test and every sweep trial
// decodes the same ids), a prompt decoded in -b pieces, and one-token steps. Shared by `bench` and the
// sweep's trial executor so that their pp and tg numbers measure the same work.
#include <cstdint>
#include <random>
#include <vector>

#include "engine/context/context.h"
#include "kernels/result.h"

namespace infertune {

// Random token ids, the same sequence for every test (a fixed seed), as llama-bench's std::rand.
class RandomTokens {
 public:
  explicit RandomTokens(uint32_t n_vocab) : pick_(0, static_cast<int32_t>(n_vocab) - 1) {}
  void fill(std::vector<int32_t>& tokens, size_t n) {
    tokens.resize(n);
    for (int32_t& t : tokens) t = pick_(rng_);
  }

 private:
  std::mt19937 rng_{20240901u};
  std::uniform_int_distribution<int32_t> pick_;
};

// `n` prompt tokens of sequence 0 in pieces of at most `n_batch`, each decode giving only its last logits.
Status eval_prompt(Context& ctx, int n, int n_batch, RandomTokens& tokens);

// One one-token step of sequence 0 (a random id; no sampling). `scratch` is reused between calls.
Status eval_gen_step(Context& ctx, RandomTokens& tokens, std::vector<int32_t>& scratch);

// `n` one-token steps.
Status eval_gen(Context& ctx, int n, RandomTokens& tokens);

}  // namespace infertune
