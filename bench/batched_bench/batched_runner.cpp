#include "bench/batched_bench/batched_runner.h"

#include <algorithm>
#include <chrono>
#include <exception>

namespace infertune {
namespace {

using Clock = std::chrono::steady_clock;

uint64_t ns_since(Clock::time_point start) {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count());
}

// A fixed, spread-out token id per (sequence, position): the ids do not change the work done.
int32_t token_at(const Context& ctx, int seq, int pos) {
  return static_cast<int32_t>((uint64_t(seq) * 7919u + uint64_t(pos) * 104729u + 13u) % ctx.n_vocab());
}

// Decodes `batch` in pieces of at most n_batch() tokens; adds the tokens decoded to `decoded`.
Status decode_in_pieces(Context& ctx, const Batch& batch, Batch& piece, int64_t& decoded) {
  const size_t step = std::max<size_t>(ctx.n_batch(), 1);
  for (size_t first = 0; first < batch.size(); first += step) {
    piece.clear();
    const size_t last = std::min(batch.size(), first + step);
    for (size_t i = first; i < last; ++i) {
      piece.add(batch.token(i), batch.pos(i), batch.seq_ids(i), batch.wants_logits(i));
    }
    if (Status s = ctx.decode(piece); !s) return s;
    decoded += static_cast<int64_t>(piece.size());
  }
  return {};
}

// The prompt phase: npp tokens of every sequence (only sequence 0 when shared, then copied); the last
// token of each sequence wants logits, as a generating client would.
Status prompt_phase(Context& ctx, const BatchedCase& test, Batch& batch, Batch& piece, int64_t& decoded) {
  batch.clear();
  const int n_prompts = test.shared_prompt ? 1 : test.n_pl;
  for (int s = 0; s < n_prompts; ++s) {
    const SeqId seq[] = {s};
    for (int p = 0; p < test.n_pp; ++p) batch.add(token_at(ctx, s, p), p, seq, p + 1 == test.n_pp);
  }
  if (Status st = decode_in_pieces(ctx, batch, piece, decoded); !st) return st;
  if (!test.shared_prompt) return {};
  for (int s = 1; s < test.n_pl; ++s) {
    if (Status st = ctx.kv_cache().seq_cp(0, s, -1, -1); !st) return st;
  }
  return {};
}

// ntg steps, each one new token for every sequence at the next position.
Status generation_phase(Context& ctx, const BatchedCase& test, Batch& batch, Batch& piece, int64_t& decoded) {
  for (int i = 0; i < test.n_tg; ++i) {
    batch.clear();
    for (int s = 0; s < test.n_pl; ++s) {
      const SeqId seq[] = {s};
      batch.add(token_at(ctx, s, test.n_pp + i), test.n_pp + i, seq, true);
    }
    if (Status st = decode_in_pieces(ctx, batch, piece, decoded); !st) return st;
  }
  return {};
}

Status measure(Context& ctx, const BatchedCase& test, BatchedRow& row) {
  if (row.n_kv > int64_t(ctx.n_ctx())) {
    return fail("N_KV {} does not fit the context's {} KV cells (-c {})", row.n_kv, ctx.n_ctx(), ctx.n_ctx());
  }
  if (uint32_t(test.n_pl) > ctx.n_seq_max()) {
    return fail("-npl {} is more than the context's {} sequences", test.n_pl, ctx.n_seq_max());
  }
  ctx.clear();
  Batch batch, piece;
  auto start = Clock::now();
  if (Status s = prompt_phase(ctx, test, batch, piece, row.pp_decoded); !s)
    return fail("prompt: {}", s.error().message);
  row.t_pp_ns = ns_since(start);
  start = Clock::now();
  if (Status s = generation_phase(ctx, test, batch, piece, row.tg_decoded); !s) {
    return fail("generation: {}", s.error().message);
  }
  row.t_tg_ns = ns_since(start);
  row.kv_used = ctx.kv_cache().n_used();
  return {};
}

}  // namespace

BatchedRow run_batched_case(Context& ctx, const BatchedCase& test) {
  BatchedRow row;
  row.test = test;
  row.n_kv = test.n_kv();
  Status status;
  try {
    status = measure(ctx, test, row);
  } catch (const std::exception& e) {  // e.g. std::bad_alloc: one failed combination must not end the run
    status = fail("{}", e.what());
  }
  if (!status) {
    row.error = status.error().message;
    row.t_pp_ns = row.t_tg_ns = 0;
  }
  ctx.clear();
  return row;
}

Status warm_up_batched(Context& ctx) {
  Batch batch;
  const int n = static_cast<int>(std::min<uint32_t>({16, ctx.n_ctx(), ctx.n_batch()}));
  for (int p = 0; p < n; ++p) batch.add(token_at(ctx, 0, p), p, {0}, p + 1 == n);
  Status status = n > 0 ? ctx.decode(batch) : Status{};
  ctx.clear();
  return status;
}

}  // namespace infertune
