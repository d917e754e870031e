#pragma once
// The combinations of a batched-bench run in llama-batched-bench's order (-npp outermost, then -ntg, then
// -npl), and the KV cells each needs: npl * (npp + ntg), or npp + npl * ntg when the prompt is shared
// (stored once, --pps).
#include <cstdint>
#include <vector>

#include "bench/batched_bench/batched_params.h"

namespace infertune {

struct BatchedCase {
  int n_pp = 0;  // prompt tokens per sequence
  int n_tg = 0;  // generated tokens per sequence
  int n_pl = 1;  // sequences
  bool shared_prompt = false;

  int64_t n_kv() const {
    return shared_prompt ? int64_t(n_pp) + int64_t(n_pl) * n_tg : int64_t(n_pl) * (int64_t(n_pp) + n_tg);
  }
  // Tokens the prompt phase evaluates: one prompt when shared, npl otherwise.
  int64_t pp_tokens() const { return shared_prompt ? n_pp : int64_t(n_pl) * n_pp; }
  int64_t tg_tokens() const { return int64_t(n_pl) * n_tg; }
};

std::vector<BatchedCase> expand_cases(const BatchedParams& params);

// The largest N_KV and -npl of the cases (0 and 1 for none): the default -c and the Context's n_seq_max.
int64_t max_n_kv(const std::vector<BatchedCase>& cases);
int max_n_pl(const std::vector<BatchedCase>& cases);

}  // namespace infertune
