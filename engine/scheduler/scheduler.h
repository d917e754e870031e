#pragma once
// Continuous batching over a Context: requests (prompt tokens, how many new tokens, sampling settings)
// run in n_parallel slots (slot s is KV sequence s), each step one batch that mixes the running requests'
// decode tokens with chunks of the prompts being computed. The decisions (admission, chunking, prefix
// reuse, eviction and preemption when the cache is full) are SchedulerPlan's (scheduler_plan.h); this
// class carries them out: KV sequence operations, Context::decode, sampling. At temperature 0 every
// request's tokens are the ones it gets decoded alone.
//
//   auto ctx = Context::create(model, {.n_ctx = 4096, .n_batch = 512, .n_seq_max = 4});
//   auto sched = Scheduler::create(*ctx, {.n_parallel = 4});
//   for (auto& p : prompts) sched->submit({.prompt = p, .max_new_tokens = 64, .sampling = params});
//   auto results = sched->run();              // [n requests] in id order
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "engine/batch/batch.h"
#include "engine/context/context.h"
#include "engine/grammar/token_grammar.h"
#include "engine/sampling/constrained_sampling.h"
#include "engine/sampling/sampler_chain.h"
#include "engine/sampling/sampling_params.h"
#include "engine/scheduler/scheduler_plan.h"
#include "kernels/result.h"

namespace infertune {

struct SchedulerParams {
  uint32_t n_parallel = 1;     // -np: slots; at most the context's n_seq_max
  uint32_t prefill_chunk = 0;  // PlanLimits::prefill_chunk: prompt tokens per step beside decode tokens (0: n_batch)
  bool stop_at_eos = true;     // end a request at the model's end-of-generation token (it is kept in the output)
  // Optional: called with the request's id and the token each time a request gets a new token, right after
  // it is sampled (a step's tokens one after another, in batch order): what a caller timestamps for TTFT
  // and inter-token latency.
  std::function<void(RequestId, int32_t)> on_token{};
  // Optional: called before on_token with the [n_vocab] logits the token was sampled from (valid only during
  // the call): what a server computes log-probabilities from.
  std::function<void(RequestId, int32_t, std::span<const float>)> on_logits{};
  // More tokens that end a request as the model's eos does (with stop_at_eos): a chat model's end-of-turn
  // markers (Tokenizer::is_end_of_generation).
  std::vector<int32_t> end_tokens{};
  // Each token's bytes, for requests with a grammar (GrammarVocabulary::from_tokenizer); required by those.
  std::shared_ptr<const GrammarVocabulary> grammar_vocabulary{};
};

struct GenerationRequest {
  std::vector<int32_t> prompt;  // token ids
  uint32_t max_new_tokens = 128;
  SamplingParams sampling{};
  // The end tokens (eos, end_tokens) are never sampled for this request: it runs to max_new_tokens, as
  // llama.cpp's ignore_eos does (benchmarks of a fixed length).
  bool ignore_eos = false;
  // false: the prompt is computed in full even where a slot's cache holds it (llama.cpp's cache_prompt: false, for
  // timing a prompt's processing).
  bool reuse_cached_prefix = true;
  // Set: every generated token keeps the text a sentence of this grammar (constrained sampling; llama-server's
  // grammar and json_schema). End tokens come only where the grammar may end, and end the request even under
  // ignore_eos once nothing else can follow.
  std::shared_ptr<const Grammar> grammar{};
};

struct GenerationResult {
  RequestId id = 0;
  std::vector<int32_t> tokens;  // the generated tokens
};

struct SchedulerStats {
  uint64_t steps = 0;          // batches decoded
  uint64_t decode_tokens = 0;  // one per running request per step
  uint64_t prompt_tokens = 0;  // prompt (and recomputed) tokens evaluated
  uint64_t reused_tokens = 0;  // prompt tokens taken from the cache by seq_cp instead of computed
  uint64_t preemptions = 0;
  uint64_t evictions = 0;  // idle slots' cached tokens dropped for room
};

class Scheduler {
 public:
  // `ctx` must outlive the Scheduler and is used by nothing else meanwhile; sequences 0 .. n_parallel - 1
  // are cleared. Errors when n_parallel is 0 or above ctx.n_seq_max(), or above ctx.n_batch().
  static Result<Scheduler> create(Context& ctx, const SchedulerParams& params);

  // Queues a request; ids count up from 0 in submission order. Errors on an empty prompt, a token outside
  // the vocabulary, 0 new tokens, bad sampling settings, or a request that would not fit the cache alone.
  Result<RequestId> submit(GenerationRequest request);

  // Drops a waiting or running request (scheduler_plan.h): a running one's KV cells are freed now. False
  // when `id` is neither (finished already, or unknown).
  Result<bool> cancel(RequestId id);

  // One step: frees cells (evicts or preempts) or decodes one batch. False when nothing is left to do.
  // An error (a failed decode) leaves the scheduler unusable.
  Result<bool> step();
  // Steps until every request finished; returns the requests that finished, in id order.
  Result<std::vector<GenerationResult>> run();
  // The requests finished so far and not yet taken, in the order they finished.
  std::vector<GenerationResult> take_finished();

  // Whether `token` ends a request (eos or one of SchedulerParams::end_tokens, when stop_at_eos).
  bool is_end_token(int32_t token) const;

  const SchedulerStats& stats() const { return stats_; }
  const SchedulerPlan& plan() const { return plan_; }

 private:
  Scheduler(Context& ctx, SchedulerPlan plan, const SchedulerParams& params);
  Status apply_admissions(const Step& step);
  Status decode_and_sample(const Step& step);
  // The request's next token from its logits row: its sampler, ignore_eos and grammar.
  Result<int32_t> sample_token(RequestId id, std::span<const float> row);
  void forget(RequestId id);

  Context* ctx_;
  SchedulerPlan plan_;
  SchedulerParams params_;
  std::unordered_map<RequestId, SamplerChain> samplers_;  // per request: survives preemption
  std::unordered_set<RequestId> ignore_eos_;              // requests whose end tokens are masked
  std::unordered_map<RequestId, TokenGrammar> grammars_;  // constrained requests: where each stands
  ConstrainedSampling sampling_;                          // with the end tokens: eos and end_tokens, when stop_at_eos
  std::vector<GenerationResult> finished_;
  Batch batch_;
  std::vector<size_t> logits_index_;  // [step.chunks.size()] batch index of the chunk's sampled token
  SchedulerStats stats_;
};

}  // namespace infertune
