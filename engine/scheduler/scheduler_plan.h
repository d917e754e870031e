#pragma once
// The bookkeeping of continuous batching, without a model: which requests run in which of the n_parallel
// slots, which tokens go into the next batch, and what to do when the KV cache runs out. The driver
// (scheduler.h) asks next(n_free) for a step, carries it out on a Context, and reports the sampled tokens
// back with sampled(). Slot s is KV sequence s.
//
// Rules, in the order next() applies them:
//   - Every decoding slot puts its one pending token in the batch first (n_batch >= n_parallel, so all fit).
//   - When the free cells cannot hold those, the planner frees cells: first an idle slot's cached tokens
//     (Step::Evict), then the youngest running request (Step::Preempt: the highest arrival number). A
//     preempted request goes back to the queue in arrival order, keeping its generated tokens, and later
//     recomputes prompt + generated, so its output is what it would have been uninterrupted.
//   - Waiting requests are admitted first in, first out (the head is never skipped) while a slot is idle and
//     the head's uncomputed tokens fit in the cells left after this step's decode tokens and the remaining
//     prompts of the slots still prefilling; otherwise admission is deferred. When nothing runs and the
//     head still does not fit, idle caches are evicted (every accepted request fits an empty cache alone).
//   - An admitted request reuses the longest common token prefix it has with any slot's cached tokens (a
//     system prompt): the driver copies those cells with seq_cp instead of recomputing them.
//   - The budget left after the decode tokens (at most n_batch, at most the free cells, and at most
//     prefill_chunk when the step has decode tokens) is split evenly among the prefilling slots, starting at a
//     cursor that moves round-robin from step to step.
// Since the oldest running request is never preempted and always gets tokens, every request finishes.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "kernels/result.h"

namespace infertune {

using RequestId = uint64_t;

struct PlanLimits {
  uint32_t n_parallel = 1;  // slots (-np), KV sequences 0 .. n_parallel - 1
  uint32_t n_batch = 2048;  // -b: the most tokens in one batch; >= n_parallel
  uint32_t n_ctx = 4096;    // -c: KV cells in all; a request needs prompt + max_new_tokens of them
  // The most prompt tokens in a step that also carries decode tokens (0: up to n_batch). A small chunk keeps
  // the running requests' next token coming while a new prompt is read (chunked prefill); a step without
  // decode tokens always takes up to n_batch.
  uint32_t prefill_chunk = 0;
};

// Tokens history[first .. first + count) of a slot's request, at positions first .. first + count - 1.
struct PlannedChunk {
  uint32_t slot = 0;
  uint32_t first = 0;
  uint32_t count = 0;
  bool logits = false;  // true on the chunk whose last token is sampled from (a decode token, a prompt's end)
  bool decode = false;  // a decode token (else a prompt chunk)
};

// A request put in a slot this step. When reused > 0, the driver first copies positions [0, reused) of
// sequence `source` into the slot (after clearing the slot, or when source == slot, trimming it to them).
struct PlannedAdmission {
  uint32_t slot = 0;
  RequestId request = 0;
  uint32_t reused = 0;
  uint32_t source = 0;
};

struct Step {
  enum class Kind {
    Done,     // nothing running, nothing waiting
    Evict,    // drop an idle slot's cached tokens: seq_rm(slot)
    Preempt,  // drop a running slot's cells: seq_rm(slot); its request was requeued
    Batch,    // apply admissions, then decode chunks (decode tokens first), then report sampled()
  };
  Kind kind = Kind::Done;
  uint32_t slot = 0;                         // Evict, Preempt
  RequestId request = 0;                     // Preempt: the requeued request
  std::vector<PlannedAdmission> admissions;  // Batch
  std::vector<PlannedChunk> chunks;          // Batch
  uint32_t n_tokens() const;
};

struct FinishedRequest {
  RequestId id = 0;
  std::vector<int32_t> generated;
};

class SchedulerPlan {
 public:
  static Result<SchedulerPlan> create(const PlanLimits& limits);

  // Queues a request (ids are given in arrival order: 0, 1, 2, ...). Errors on an empty prompt, zero new
  // tokens, or one that would not fit the cache alone (prompt + max_new_tokens > n_ctx). reuse_prefix false:
  // its prompt is computed in full even where a slot's cache holds it (llama.cpp's cache_prompt: false).
  Result<RequestId> submit(std::vector<int32_t> prompt, uint32_t max_new_tokens, bool reuse_prefix = true);

  // The next step, given the free cells of the cache now. The planner's state already reflects the step
  // as done (the chunks' tokens cached, the evicted or preempted cells gone): the driver must carry it out.
  Step next(uint32_t n_free);

  // The token sampled from a chunk with logits; stop (e.g. end of generation) ends the request early.
  // Returns true when the request finished (its output is in finished()).
  bool sampled(uint32_t slot, int32_t token, bool stop);

  // Drops request `id` before it finishes (a client went away, a stop string matched): a waiting request
  // leaves the queue; a running one leaves its slot, which becomes idle with nothing cached, and the returned
  // slot's sequence must be cleared by the driver. False for an id that is neither waiting nor running.
  struct Cancelled {
    bool found = false;
    std::optional<uint32_t> slot{};  // set when the request was running there
  };
  Cancelled cancel(RequestId id);

  // The tokens of the request running in `slot`: prompt + generated so far (what the chunks index).
  std::span<const int32_t> history(uint32_t slot) const;
  // The request in `slot`, if one runs there.
  std::optional<RequestId> running(uint32_t slot) const;
  // Where the request in `slot` stands (nullopt: the slot is idle), for monitoring (the server's GET /slots).
  struct Progress {
    RequestId id = 0;
    uint32_t n_prompt = 0;        // the prompt's tokens
    uint32_t n_generated = 0;     // tokens generated so far
    uint32_t max_new_tokens = 0;  // the most it may generate
    uint32_t n_reused = 0;        // tokens of its history found in the cache when it was (last) admitted
    bool prefilling = false;      // its prompt (after a preemption: prompt + generated) is still being read
  };
  std::optional<Progress> progress(uint32_t slot) const;
  // Tokens of the sequence of `slot` that are in the KV cache (positions 0 .. size - 1).
  std::span<const int32_t> cached(uint32_t slot) const { return slots_[slot].cached; }

  std::vector<FinishedRequest> take_finished() { return std::exchange(finished_, {}); }
  size_t n_waiting() const { return queue_.size(); }
  size_t n_running() const;
  const PlanLimits& limits() const { return limits_; }

  // Counters for the driver's statistics.
  uint64_t n_preempted() const { return n_preempted_; }
  uint64_t n_evicted() const { return n_evicted_; }
  uint64_t n_reused_tokens() const { return n_reused_tokens_; }

 private:
  struct Request {
    RequestId id = 0;
    std::vector<int32_t> history;  // prompt, then the generated tokens
    uint32_t n_prompt = 0;
    uint32_t max_new_tokens = 0;
    uint32_t n_reused = 0;  // at its last admission
    bool reuse_prefix = true;
  };
  enum class State { Idle, Prefill, Decode };
  struct Slot {
    State state = State::Idle;
    std::optional<Request> request;  // set unless Idle
    uint32_t n_work = 0;             // Prefill: the history length to compute before the first sample
    std::vector<int32_t> cached;     // the tokens of this sequence in the cache
  };

  explicit SchedulerPlan(const PlanLimits& limits) : limits_(limits), slots_(limits.n_parallel) {}

  uint32_t count(State state) const;
  uint32_t remaining_prefill() const;  // uncached work tokens of the prefilling slots
  std::optional<uint32_t> youngest_running() const;
  std::optional<uint32_t> idle_with_cache(std::span<const int32_t> keep_for) const;
  // The best reuse for `tokens`: the slot whose cache shares the longest prefix (ties: lowest slot).
  std::pair<uint32_t, uint32_t> best_prefix(std::span<const int32_t> tokens) const;
  bool try_admit(uint32_t budget, Step& step);
  Step evict(uint32_t slot);
  Step preempt(uint32_t slot);
  void plan_prefill(uint32_t budget, Step& step);

  PlanLimits limits_;
  std::vector<Slot> slots_;
  std::deque<Request> queue_;  // by arrival (id)
  std::vector<FinishedRequest> finished_;
  RequestId next_id_ = 0;
  uint32_t cursor_ = 0;  // round-robin start among the slots for prompt chunks
  uint64_t n_preempted_ = 0;
  uint64_t n_evicted_ = 0;
  uint64_t n_reused_tokens_ = 0;
};

}  // namespace infertune
