#pragma once
// One combination of a batched-bench run on a Context whose n_seq_max covers its -npl, as
// llama-batched-bench: clear the cache; the prompt phase (npl sequences of npp tokens, or with --pps one
// prompt on sequence 0 then copied to the others with seq_cp), timed as T_PP; then ntg steps of one token
// per sequence (a batch of npl tokens), timed as T_TG. Every batch is decoded in pieces of at most -b
// tokens. A combination that does not fit the context's cells, or whose decode fails, is an error row.
#include <cstdint>
#include <string>

#include "bench/batched_bench/batched_matrix.h"
#include "engine/context/context.h"

namespace infertune {

struct BatchedRow {
  BatchedCase test;
  int64_t n_kv = 0;        // the cells the combination needs (BatchedCase::n_kv)
  uint64_t t_pp_ns = 0;    // prompt phase
  uint64_t t_tg_ns = 0;    // generation phase
  int64_t pp_decoded = 0;  // tokens the prompt phase decoded
  int64_t tg_decoded = 0;  // tokens the generation phase decoded
  int64_t kv_used = 0;     // cache cells in use at the end (equals n_kv: a shared prompt is stored once)
  std::string error;       // non-empty: the combination could not run, and why

  bool ok() const { return error.empty(); }
  double t_pp_s() const { return double(t_pp_ns) * 1e-9; }
  double t_tg_s() const { return double(t_tg_ns) * 1e-9; }
  double t_s() const { return t_pp_s() + t_tg_s(); }
  // llama-batched-bench's speeds: prompt tokens evaluated / T_PP, generated tokens / T_TG, N_KV / T.
  double s_pp() const { return t_pp_ns ? double(test.pp_tokens()) / t_pp_s() : 0.0; }
  double s_tg() const { return t_tg_ns ? double(test.tg_tokens()) / t_tg_s() : 0.0; }
  double s() const { return t_s() > 0 ? double(n_kv) / t_s() : 0.0; }
};

BatchedRow run_batched_case(Context& ctx, const BatchedCase& test);

// llama-batched-bench's warmup: a few tokens on sequence 0, untimed, then the cache is cleared.
Status warm_up_batched(Context& ctx);

}  // namespace infertune
