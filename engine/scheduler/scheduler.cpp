#include "engine/scheduler/scheduler.h"

#include <algorithm>
#include <utility>

namespace infertune {
namespace {

// eos and SchedulerParams::end_tokens, when stop_at_eos.
std::vector<int32_t> end_tokens_of(const Context& ctx, const SchedulerParams& params) {
  if (!params.stop_at_eos) return {};
  std::vector<int32_t> end = params.end_tokens;
  if (const auto& eos = ctx.model().config().tokens.eos) end.push_back(static_cast<int32_t>(*eos));
  return end;
}

}  // namespace

Scheduler::Scheduler(Context& ctx, SchedulerPlan plan, const SchedulerParams& params)
    : ctx_(&ctx), plan_(std::move(plan)), params_(params), sampling_(end_tokens_of(ctx, params)) {}

Result<Scheduler> Scheduler::create(Context& ctx, const SchedulerParams& params) {
  if (params.n_parallel == 0 || params.n_parallel > ctx.n_seq_max()) {
    return fail("scheduler: n_parallel ({}) must be in [1, {}] (the context's sequences, -np)", params.n_parallel,
                ctx.n_seq_max());
  }
  auto plan = SchedulerPlan::create({.n_parallel = params.n_parallel,
                                     .n_batch = ctx.n_batch(),
                                     .n_ctx = ctx.n_ctx(),
                                     .prefill_chunk = params.prefill_chunk});
  if (!plan) return plan.error();
  // The plan starts with empty slots: so must the sequences.
  for (uint32_t s = 0; s < params.n_parallel; ++s) {
    if (Status st = ctx.kv_cache().seq_rm(static_cast<SeqId>(s), -1, -1); !st) return st.error();
  }
  return Scheduler(ctx, std::move(*plan), params);
}

Result<RequestId> Scheduler::submit(GenerationRequest request) {
  for (size_t i = 0; i < request.prompt.size(); ++i) {
    if (request.prompt[i] < 0 || static_cast<uint32_t>(request.prompt[i]) >= ctx_->n_vocab()) {
      return fail("scheduler: prompt token {} is {}, outside the vocabulary [0, {})", i, request.prompt[i],
                  ctx_->n_vocab());
    }
  }
  if (request.grammar && !params_.grammar_vocabulary) {
    return fail("scheduler: a request with a grammar needs SchedulerParams::grammar_vocabulary");
  }
  auto chain = SamplerChain::create(request.sampling);
  if (!chain) return chain.error();
  // The penalties see the prompt, as in llama.cpp's server.
  for (int32_t t : request.prompt) chain->accept(t);
  auto id = plan_.submit(std::move(request.prompt), request.max_new_tokens, request.reuse_cached_prefix);
  if (!id) return id.error();
  samplers_.emplace(*id, std::move(*chain));
  if (request.ignore_eos) ignore_eos_.insert(*id);
  if (request.grammar) grammars_.emplace(*id, TokenGrammar(request.grammar, params_.grammar_vocabulary));
  return *id;
}

bool Scheduler::is_end_token(int32_t token) const { return sampling_.is_end_token(token); }

Result<bool> Scheduler::cancel(RequestId id) {
  const SchedulerPlan::Cancelled cancelled = plan_.cancel(id);
  if (!cancelled.found) return false;
  forget(id);
  if (cancelled.slot) {
    if (Status st = ctx_->kv_cache().seq_rm(static_cast<SeqId>(*cancelled.slot), -1, -1); !st) return st.error();
  }
  return true;
}

Status Scheduler::apply_admissions(const Step& step) {
  KvCache& cache = ctx_->kv_cache();
  for (const PlannedAdmission& a : step.admissions) {
    const auto slot = static_cast<SeqId>(a.slot);
    if (a.source == a.slot) {
      // Its own cache: keep the shared prefix, drop the rest.
      if (Status st = cache.seq_rm(slot, static_cast<int32_t>(a.reused), -1); !st) return st;
    } else {
      if (Status st = cache.seq_rm(slot, -1, -1); !st) return st;
      if (Status st = cache.seq_cp(static_cast<SeqId>(a.source), slot, 0, static_cast<int32_t>(a.reused)); !st) {
        return st;
      }
    }
    stats_.reused_tokens += a.reused;
  }
  return {};
}

Status Scheduler::decode_and_sample(const Step& step) {
  batch_.clear();
  logits_index_.assign(step.chunks.size(), 0);
  for (size_t c = 0; c < step.chunks.size(); ++c) {
    const PlannedChunk& chunk = step.chunks[c];
    const std::span<const int32_t> history = plan_.history(chunk.slot);
    const SeqId seq = static_cast<SeqId>(chunk.slot);
    for (uint32_t i = chunk.first; i < chunk.first + chunk.count; ++i) {
      const bool last = i + 1 == chunk.first + chunk.count;
      batch_.add(history[i], static_cast<int32_t>(i), {seq}, chunk.logits && last);
    }
    logits_index_[c] = batch_.size() - 1;
    (chunk.decode ? stats_.decode_tokens : stats_.prompt_tokens) += chunk.count;
  }
  if (Status st = ctx_->decode(batch_); !st) {
    return fail("scheduler: decoding a batch of {} tokens failed{}: {}", batch_.size(),
                ctx_->last_failure() == DecodeFailure::CacheFull ? " (cache full despite the plan)" : "",
                st.error().message);
  }
  ++stats_.steps;
  for (size_t c = 0; c < step.chunks.size(); ++c) {
    const PlannedChunk& chunk = step.chunks[c];
    if (!chunk.logits) continue;
    auto row = ctx_->logits_ith(logits_index_[c]);
    if (!row) return row.error();
    const RequestId id = *plan_.running(chunk.slot);
    auto token = sample_token(id, *row);
    if (!token) return fail("scheduler: request {}: {}", id, token.error().message);
    if (params_.on_logits) params_.on_logits(id, *token, *row);
    if (params_.on_token) params_.on_token(id, *token);
    if (plan_.sampled(chunk.slot, *token, is_end_token(*token))) forget(id);
  }
  for (FinishedRequest& f : plan_.take_finished()) finished_.push_back({.id = f.id, .tokens = std::move(f.generated)});
  return {};
}

Result<int32_t> Scheduler::sample_token(RequestId id, std::span<const float> row) {
  const auto grammar = grammars_.find(id);
  return sampling_.pick(
      samplers_.at(id), row,
      {.grammar = grammar == grammars_.end() ? nullptr : &grammar->second, .ban_end_tokens = ignore_eos_.contains(id)});
}

void Scheduler::forget(RequestId id) {
  samplers_.erase(id);
  ignore_eos_.erase(id);
  grammars_.erase(id);
}

Result<bool> Scheduler::step() {
  const Step step = plan_.next(ctx_->kv_cache().n_free());
  switch (step.kind) {
    case Step::Kind::Done:
      if (plan_.n_waiting() > 0) {
        return fail("scheduler: {} requests wait but none fits the {} free cells", plan_.n_waiting(),
                    ctx_->kv_cache().n_free());
      }
      return false;
    case Step::Kind::Evict:
    case Step::Kind::Preempt:
      if (Status st = ctx_->kv_cache().seq_rm(static_cast<SeqId>(step.slot), -1, -1); !st) return st.error();
      ++(step.kind == Step::Kind::Evict ? stats_.evictions : stats_.preemptions);
      return true;
    case Step::Kind::Batch:
      if (Status st = apply_admissions(step); !st) return st.error();
      if (Status st = decode_and_sample(step); !st) return st.error();
      return true;
  }
  return false;
}

Result<std::vector<GenerationResult>> Scheduler::run() {
  for (;;) {
    auto more = step();
    if (!more) return more.error();
    if (!*more) break;
  }
  std::vector<GenerationResult> out = take_finished();
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  return out;
}

std::vector<GenerationResult> Scheduler::take_finished() { return std::exchange(finished_, {}); }

}  // namespace infertune
