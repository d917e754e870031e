#include "engine/scheduler/scheduler_plan.h"

#include <algorithm>
#include <utility>

namespace infertune {
namespace {

uint32_t common_prefix(std::span<const int32_t> a, std::span<const int32_t> b) {
  const auto [ia, ib] = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
  return static_cast<uint32_t>(ia - a.begin());
}

}  // namespace

uint32_t Step::n_tokens() const {
  uint32_t n = 0;
  for (const PlannedChunk& c : chunks) n += c.count;
  return n;
}

Result<SchedulerPlan> SchedulerPlan::create(const PlanLimits& limits) {
  if (limits.n_parallel == 0) return fail("scheduler: n_parallel must be at least 1");
  if (limits.n_batch < limits.n_parallel) {
    return fail("scheduler: n_batch ({}) must be at least n_parallel ({}): every slot decodes each step",
                limits.n_batch, limits.n_parallel);
  }
  if (limits.n_ctx == 0) return fail("scheduler: n_ctx must be at least 1");
  return SchedulerPlan(limits);
}

Result<RequestId> SchedulerPlan::submit(std::vector<int32_t> prompt, uint32_t max_new_tokens, bool reuse_prefix) {
  const RequestId id = next_id_;
  if (prompt.empty()) return fail("scheduler: request {} has an empty prompt", id);
  if (max_new_tokens == 0) return fail("scheduler: request {} asks for 0 new tokens", id);
  if (prompt.size() + max_new_tokens > limits_.n_ctx) {
    return fail("scheduler: request {} needs {} prompt + {} new tokens, more than the {} cells of the context", id,
                prompt.size(), max_new_tokens, limits_.n_ctx);
  }
  ++next_id_;
  Request r;
  r.id = id;
  r.n_prompt = static_cast<uint32_t>(prompt.size());
  r.history = std::move(prompt);
  r.max_new_tokens = max_new_tokens;
  r.reuse_prefix = reuse_prefix;
  queue_.push_back(std::move(r));
  return id;
}

uint32_t SchedulerPlan::count(State state) const {
  return static_cast<uint32_t>(
      std::count_if(slots_.begin(), slots_.end(), [&](const Slot& s) { return s.state == state; }));
}

size_t SchedulerPlan::n_running() const { return slots_.size() - count(State::Idle); }

uint32_t SchedulerPlan::remaining_prefill() const {
  uint32_t n = 0;
  for (const Slot& s : slots_) {
    if (s.state == State::Prefill) n += s.n_work - static_cast<uint32_t>(s.cached.size());
  }
  return n;
}

std::optional<uint32_t> SchedulerPlan::youngest_running() const {
  std::optional<uint32_t> best;
  for (uint32_t i = 0; i < slots_.size(); ++i) {
    if (slots_[i].state == State::Idle) continue;
    if (!best || slots_[i].request->id > slots_[*best].request->id) best = i;
  }
  return best;
}

std::optional<uint32_t> SchedulerPlan::idle_with_cache(std::span<const int32_t> keep_for) const {
  // The idle cache least useful to `keep_for` (the head of the queue) goes first.
  std::optional<uint32_t> best;
  uint32_t best_lcp = 0;
  for (uint32_t i = 0; i < slots_.size(); ++i) {
    if (slots_[i].state != State::Idle || slots_[i].cached.empty()) continue;
    const uint32_t lcp = common_prefix(slots_[i].cached, keep_for);
    if (!best || lcp < best_lcp) {
      best = i;
      best_lcp = lcp;
    }
  }
  return best;
}

std::pair<uint32_t, uint32_t> SchedulerPlan::best_prefix(std::span<const int32_t> tokens) const {
  uint32_t source = 0;
  uint32_t best = 0;
  for (uint32_t i = 0; i < slots_.size(); ++i) {
    const uint32_t lcp = common_prefix(slots_[i].cached, tokens);
    if (lcp > best) {
      best = lcp;
      source = i;
    }
  }
  return {source, best};
}

Step SchedulerPlan::evict(uint32_t slot) {
  slots_[slot].cached.clear();
  ++n_evicted_;
  Step step;
  step.kind = Step::Kind::Evict;
  step.slot = slot;
  return step;
}

Step SchedulerPlan::preempt(uint32_t slot) {
  Slot& s = slots_[slot];
  Request r = std::move(*s.request);
  s.request.reset();
  s.state = State::Idle;
  s.cached.clear();
  ++n_preempted_;
  const RequestId id = r.id;
  // Back in arrival order: ahead of every request that came later, so it is readmitted first.
  auto at = std::find_if(queue_.begin(), queue_.end(), [&](const Request& q) { return q.id > id; });
  queue_.insert(at, std::move(r));
  Step step;
  step.kind = Step::Kind::Preempt;
  step.slot = slot;
  step.request = id;
  return step;
}

bool SchedulerPlan::try_admit(uint32_t cells_left, Step& step) {
  if (queue_.empty()) return false;
  const std::vector<int32_t>& work = queue_.front().history;
  const bool reuse = queue_.front().reuse_prefix;
  // The idle slot whose own cache serves the head best; ties: the smallest cache (keeps others' prefixes). A
  // request that reuses nothing takes the smallest.
  std::optional<uint32_t> slot;
  uint32_t slot_lcp = 0;
  for (uint32_t i = 0; i < slots_.size(); ++i) {
    if (slots_[i].state != State::Idle) continue;
    const uint32_t lcp = reuse ? common_prefix(slots_[i].cached, work) : 0;
    if (!slot || lcp > slot_lcp || (lcp == slot_lcp && slots_[i].cached.size() < slots_[*slot].cached.size())) {
      slot = i;
      slot_lcp = lcp;
    }
  }
  if (!slot) return false;
  auto [source, reused] = reuse ? best_prefix(work) : std::pair<uint32_t, uint32_t>{*slot, 0};
  // At least the last token is computed: its logits give the next token.
  reused = std::min(reused, static_cast<uint32_t>(work.size()) - 1);
  if (reused == 0) source = *slot;
  const uint32_t uncached = static_cast<uint32_t>(work.size()) - reused;
  if (uint64_t{uncached} + remaining_prefill() > cells_left) return false;  // deferred until cells free up

  Slot& s = slots_[*slot];
  std::vector<int32_t> prefix(slots_[source].cached.begin(), slots_[source].cached.begin() + reused);
  s.cached = std::move(prefix);
  s.request = std::move(queue_.front());
  queue_.pop_front();
  s.state = State::Prefill;
  s.n_work = static_cast<uint32_t>(s.request->history.size());
  s.request->n_reused = reused;
  n_reused_tokens_ += reused;
  step.admissions.push_back({.slot = *slot, .request = s.request->id, .reused = reused, .source = source});
  return true;
}

void SchedulerPlan::plan_prefill(uint32_t budget, Step& step) {
  const uint32_t n = static_cast<uint32_t>(slots_.size());
  std::vector<uint32_t> order;  // prefilling slots, from the round-robin cursor
  for (uint32_t k = 0; k < n; ++k) {
    const uint32_t i = (cursor_ + k) % n;
    if (slots_[i].state == State::Prefill) order.push_back(i);
  }
  cursor_ = (cursor_ + 1) % n;
  std::vector<uint32_t> take(n, 0);
  // Even shares, repeated while budget is left and someone still needs tokens.
  for (;;) {
    uint32_t wanting = 0;
    for (uint32_t i : order) wanting += slots_[i].n_work > slots_[i].cached.size() + take[i] ? 1 : 0;
    if (wanting == 0 || budget == 0) break;
    const uint32_t share = std::max<uint32_t>(1, budget / wanting);
    for (uint32_t i : order) {
      const uint32_t need = slots_[i].n_work - static_cast<uint32_t>(slots_[i].cached.size()) - take[i];
      const uint32_t t = std::min({need, share, budget});
      take[i] += t;
      budget -= t;
    }
  }
  for (uint32_t i : order) {
    if (take[i] == 0) continue;
    const uint32_t first = static_cast<uint32_t>(slots_[i].cached.size());
    step.chunks.push_back({.slot = i, .first = first, .count = take[i], .logits = first + take[i] == slots_[i].n_work});
  }
}

Step SchedulerPlan::next(uint32_t n_free) {
  const uint32_t n_decode = count(State::Decode);
  const std::span<const int32_t> head =
      queue_.empty() ? std::span<const int32_t>() : std::span<const int32_t>(queue_.front().history);
  if (n_decode > n_free) {
    if (auto s = idle_with_cache(head)) return evict(*s);
    return preempt(*youngest_running());  // n_decode > 0: someone runs
  }
  const uint32_t cells_left = n_free - n_decode;
  Step step;
  step.kind = Step::Kind::Batch;
  for (uint32_t i = 0; i < slots_.size(); ++i) {
    if (slots_[i].state != State::Decode) continue;
    step.chunks.push_back({.slot = i,
                           .first = static_cast<uint32_t>(slots_[i].cached.size()),
                           .count = 1,
                           .logits = true,
                           .decode = true});
  }
  while (try_admit(cells_left, step)) {
  }
  uint32_t budget = std::min(limits_.n_batch - n_decode, cells_left);
  if (n_decode > 0 && limits_.prefill_chunk > 0) budget = std::min(budget, limits_.prefill_chunk);
  plan_prefill(budget, step);

  if (step.chunks.empty()) {
    if (n_running() == 0 && queue_.empty()) return Step{};
    // Out of cells: running slots cannot progress, or the head does not fit with nothing running.
    const std::span<const int32_t> waiting =
        queue_.empty() ? std::span<const int32_t>() : std::span<const int32_t>(queue_.front().history);
    if (auto s = idle_with_cache(waiting)) return evict(*s);
    if (auto s = youngest_running()) return preempt(*s);
    return Step{};  // unreachable: an accepted request fits an empty cache
  }
  for (const PlannedChunk& c : step.chunks) {
    Slot& s = slots_[c.slot];
    const auto& h = s.request->history;
    s.cached.insert(s.cached.end(), h.begin() + c.first, h.begin() + c.first + c.count);
  }
  return step;
}

bool SchedulerPlan::sampled(uint32_t slot, int32_t token, bool stop) {
  Slot& s = slots_[slot];
  Request& r = *s.request;
  r.history.push_back(token);
  s.state = State::Decode;
  const size_t generated = r.history.size() - r.n_prompt;
  if (!stop && generated < r.max_new_tokens) return false;
  finished_.push_back({.id = r.id, .generated = std::vector<int32_t>(r.history.begin() + r.n_prompt, r.history.end())});
  // The cache keeps its tokens (all but the last sampled one) for a later request's prefix.
  s.request.reset();
  s.state = State::Idle;
  return true;
}

SchedulerPlan::Cancelled SchedulerPlan::cancel(RequestId id) {
  if (auto it = std::find_if(queue_.begin(), queue_.end(), [&](const Request& r) { return r.id == id; });
      it != queue_.end()) {
    queue_.erase(it);
    return {.found = true};
  }
  for (uint32_t i = 0; i < slots_.size(); ++i) {
    Slot& s = slots_[i];
    if (!s.request || s.request->id != id) continue;
    s.request.reset();
    s.state = State::Idle;
    s.cached.clear();
    return {.found = true, .slot = i};
  }
  return {};
}

std::span<const int32_t> SchedulerPlan::history(uint32_t slot) const {
  const Slot& s = slots_[slot];
  return s.request ? std::span<const int32_t>(s.request->history) : std::span<const int32_t>();
}

std::optional<RequestId> SchedulerPlan::running(uint32_t slot) const {
  const Slot& s = slots_[slot];
  return s.request ? std::optional<RequestId>(s.request->id) : std::nullopt;
}

std::optional<SchedulerPlan::Progress> SchedulerPlan::progress(uint32_t slot) const {
  const Slot& s = slots_[slot];
  if (!s.request) return std::nullopt;
  const Request& r = *s.request;
  return Progress{.id = r.id,
                  .n_prompt = r.n_prompt,
                  .n_generated = static_cast<uint32_t>(r.history.size()) - r.n_prompt,
                  .max_new_tokens = r.max_new_tokens,
                  .n_reused = r.n_reused,
                  .prefilling = s.state == State::Prefill};
}

}  // namespace infertune
