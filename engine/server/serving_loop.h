#pragma once
// The one thread that runs the model for the server. HTTP handler threads submit jobs and read each job's
// tokens from its RequestChannel; the loop owns the Scheduler (continuous batching: chunked prefill mixed
// with the running requests' decode tokens in one batch, prefix reuse, preemption when the cache is full),
// takes new jobs and cancellations between steps, and sleeps when there is nothing to do.
//
//   ServingLoop loop(ctx, {.n_parallel = 4}, {.max_waiting = 16}, metrics);
//   loop.start();
//   auto [channel, refusal] = loop.submit(job);          // refusal: queue full, draining
//   for (;;) { auto got = channel->wait(100ms); ...; if (got.finished) break; }
//   loop.cancel(channel);                                 // a client that went away: its cells are freed
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "engine/context/context.h"
#include "engine/scheduler/scheduler.h"
#include "engine/server/embedding_work.h"
#include "engine/server/server_metrics.h"
#include "kernels/result.h"

namespace infertune {

struct TokenLogprob {
  int32_t token = 0;
  float logprob = 0;
};

struct GeneratedToken {
  int32_t token = 0;
  bool end_of_generation = false;  // an end token (eos, end of turn): ends the request, not part of the text
  float logprob = 0;               // of this token under the model's distribution (when asked)
  std::vector<TokenLogprob> top;   // the most likely tokens at this step, best first (when asked)
  std::chrono::steady_clock::time_point at{};  // when it was sampled
  uint32_t prompt_cached = 0;  // a request's first token only: its prompt tokens found in the cache (reused)
  int32_t slot = -1;           // a request's first token only: the slot that runs it
  // A request's first token only: the start of the step that gave it a slot (its prompt's first step), so that
  // prompt time can leave out the wait for a slot.
  std::chrono::steady_clock::time_point prompt_started{};
};

enum class FinishReason { stop, length, cancelled, error };

// Wakes a reader of several channels (a streamed request with several prompts) when any of them has news.
class Doorbell {
 public:
  void ring();
  uint64_t rings() const;
  // Waits until the count of rings passes `seen` (at once if it has), or the timeout.
  void wait(uint64_t seen, std::chrono::milliseconds timeout);

 private:
  mutable std::mutex mutex_;
  std::condition_variable rung_;
  uint64_t rings_ = 0;
};

class RequestChannel {
 public:
  struct Update {
    std::vector<GeneratedToken> tokens;
    bool finished = false;
    FinishReason reason = FinishReason::stop;
    std::string error;  // FinishReason::error
  };
  // Waits up to `timeout` for tokens or the end; returns what arrived since the last call.
  Update wait(std::chrono::milliseconds timeout);

 private:
  friend class ServingLoop;
  void push(GeneratedToken token);
  void finish(FinishReason reason, std::string error = {});

  std::mutex mutex_;
  std::condition_variable ready_;
  std::vector<GeneratedToken> tokens_;
  bool finished_ = false;
  FinishReason reason_ = FinishReason::stop;
  std::string error_;
  std::shared_ptr<Doorbell> doorbell_;  // rung after each push and the finish, when the job brought one
  // The loop's own fields (only its thread touches them).
  RequestId id_ = 0;
  std::chrono::steady_clock::time_point last_token_;                     // the arrival, until the first token
  std::optional<std::chrono::steady_clock::time_point> prompt_started_;  // the step that gave it a slot
  bool first_token_sent_ = false;
};

struct ServeJob {
  std::vector<int32_t> prompt;
  uint32_t max_tokens = 1;
  SamplingParams sampling;
  std::optional<uint32_t> top_logprobs;      // set: compute log-probabilities, with this many alternatives
  bool ignore_eos = false;                   // GenerationRequest::ignore_eos
  bool cache_prompt = true;                  // GenerationRequest::reuse_cached_prefix
  std::shared_ptr<const Grammar> grammar{};  // GenerationRequest::grammar
  std::shared_ptr<Doorbell> doorbell{};      // optional: rung with each token and the end
  std::chrono::steady_clock::time_point arrival = std::chrono::steady_clock::now();
};

struct LoopLimits {
  uint32_t max_waiting = 16;  // jobs queued for a slot (or embedding requests held) beyond which submit refuses (503)
  // When a job wakes the idle loop, it waits until no other job has come for this long (at most 5 times it) before
  // the first step: jobs sent together (clients that all got their last token in one step) then have their prompts
  // read in one step, instead of the first one's alone and the others' in a second step that stalls its tokens.
  std::chrono::microseconds gather{2000};
};

// One slot as GET /slots shows it: the request it runs (with that request's sampling) or nothing.
struct SlotState {
  uint32_t id = 0;
  std::optional<SchedulerPlan::Progress> running;  // nullopt: idle
  SamplingParams sampling{};                       // the running request's
  bool ignore_eos = false;
  uint32_t n_probs = 0;   // the running request's top_logprobs
  uint32_t n_cached = 0;  // tokens of the slot's sequence in the KV cache (kept after a request for reuse)
};

class ServingLoop {
 public:
  ServingLoop(Context& ctx, SchedulerParams params, LoopLimits limits, ServerMetrics& metrics);
  ~ServingLoop();
  ServingLoop(const ServingLoop&) = delete;
  ServingLoop& operator=(const ServingLoop&) = delete;

  Status start();

  enum class Refusal { none, queue_full, draining };
  struct Submitted {
    std::shared_ptr<RequestChannel> channel;  // null when refused
    Refusal refusal = Refusal::none;
  };
  Submitted submit(ServeJob job);

  // Embedding requests (serve --embeddings): run on `ctx` (a context that keeps embeddings, sharing the model
  // and the pool) by the loop's thread between its steps. Call before start().
  void enable_embeddings(Context& ctx, Pooling pooling);
  // The embedding work, or null when embeddings are off (its pooling() and max_input_tokens() are constant).
  const EmbeddingWork* embeddings() const { return embeddings_ ? &*embeddings_ : nullptr; }
  struct SubmittedEmbedding {
    std::shared_ptr<EmbeddingTicket> ticket;  // null when refused
    Refusal refusal = Refusal::none;
  };
  SubmittedEmbedding submit_embeddings(EmbedJob job);
  // Drops the job (waiting or running); its channel finishes with FinishReason::cancelled unless it finished.
  void cancel(const std::shared_ptr<RequestChannel>& channel);

  // Refuses new jobs from now on (SIGTERM); running and queued ones go on.
  void drain();
  // Waits until no job is queued or running, or the deadline; true when idle.
  bool wait_idle(std::chrono::steady_clock::time_point deadline);
  // Cancels what is left and joins the thread.
  void stop();

  // Every slot as of the last step (any thread).
  std::vector<SlotState> slots() const;

 private:
  void run();
  void gather_arrivals(std::unique_lock<std::mutex>& lock);
  void admit(std::vector<std::pair<ServeJob, std::shared_ptr<RequestChannel>>>& jobs);
  void apply_cancels(const std::vector<std::shared_ptr<RequestChannel>>& cancels);
  void on_sampled(RequestId id, int32_t token, std::span<const float> logits);
  // The slot that runs request `id` and what the plan says of it there; nullopt when none does.
  std::optional<std::pair<uint32_t, SchedulerPlan::Progress>> running_slot(RequestId id) const;
  void step();
  bool has_work() const;  // with mutex_ held
  void fail_all(const std::string& message);
  void publish_gauges();
  void publish_counters();
  void publish_slots();
  void note_prompt_starts();

  Context* ctx_;
  SchedulerParams params_;
  LoopLimits limits_;
  ServerMetrics* metrics_;
  std::optional<Scheduler> scheduler_;
  // What a job asked for beyond its tokens, kept while it runs.
  struct JobOptions {
    SamplingParams sampling;
    bool ignore_eos = false;
    std::optional<uint32_t> top_logprobs;
  };
  std::unordered_map<RequestId, std::shared_ptr<RequestChannel>> active_;  // loop thread only
  std::unordered_map<RequestId, JobOptions> options_;                      // loop thread only
  SchedulerStats stats_seen_;                           // the scheduler's counters as last reported to the metrics
  std::chrono::steady_clock::time_point step_started_;  // of the step running or last run (loop thread only)

  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  std::vector<std::pair<ServeJob, std::shared_ptr<RequestChannel>>> incoming_;
  std::vector<std::shared_ptr<RequestChannel>> cancels_;
  std::vector<std::pair<EmbedJob, std::shared_ptr<EmbeddingTicket>>> incoming_embeddings_;
  std::optional<EmbeddingWork> embeddings_;  // its requests: the loop thread's only
  size_t embeddings_held_ = 0;               // of those, as of the last step (queue_full counts them)
  size_t in_scheduler_ = 0;                  // jobs the scheduler holds (queued or running), as of the last step
  size_t waiting_ = 0;                       // of those, queued for a slot
  bool busy_ = false;
  bool draining_ = false;
  bool stopping_ = false;
  std::thread thread_;

  mutable std::mutex slots_mutex_;
  std::vector<SlotState> slots_;  // written by the loop thread after each step
};

// The log-probability of `token` and the `top` most likely tokens of a row of logits (log-softmax).
GeneratedToken token_logprobs(int32_t token, std::span<const float> logits, uint32_t top);

}  // namespace infertune
