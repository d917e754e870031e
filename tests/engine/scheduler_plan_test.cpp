// SchedulerPlan without a model: a simulated KV cache (cells holding a token, a position and a set of
// sequences, with seq_rm / seq_cp as the real one) and a deterministic "model" (the next token is a hash
// of the history) drive the planner. Checked: the batch budget and the free cells are never exceeded,
// decode tokens come first, every chunk continues exactly the tokens its sequence has cached (so a reused
// prefix is the right one), admission is FIFO and deferred when it does not fit, preemption picks the
// youngest and requeues it ahead of later requests, prefix reuse picks the longest match, every running
// request progresses within a bounded number of steps, and every request's output equals its output run
// alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <vector>

#include "engine/scheduler/scheduler_plan.h"

namespace infertune {
namespace {

int32_t fake_next(std::span<const int32_t> history) {
  uint64_t h = 1469598103934665603ull;
  for (int32_t t : history) h = (h ^ static_cast<uint64_t>(t)) * 1099511628211ull;
  return static_cast<int32_t>(h % 50);
}

std::vector<int32_t> alone(std::vector<int32_t> prompt, uint32_t max_new) {
  const size_t n = prompt.size();
  while (prompt.size() < n + max_new) prompt.push_back(fake_next(prompt));
  return {prompt.begin() + n, prompt.end()};
}

struct Cell {
  int32_t token;
  int32_t pos;
  std::set<uint32_t> seqs;
};

// The cache bookkeeping the planner's steps are carried out on.
class SimCache {
 public:
  explicit SimCache(uint32_t n_ctx) : n_ctx_(n_ctx) {}
  uint32_t n_free() const { return n_ctx_ - static_cast<uint32_t>(cells_.size()); }
  void rm(uint32_t seq, int32_t p0) {
    for (Cell& c : cells_) {
      if (c.pos >= p0) c.seqs.erase(seq);
    }
    std::erase_if(cells_, [](const Cell& c) { return c.seqs.empty(); });
  }
  void cp(uint32_t src, uint32_t dst, int32_t p1) {
    for (Cell& c : cells_) {
      if (c.pos < p1 && c.seqs.contains(src)) c.seqs.insert(dst);
    }
  }
  void add(int32_t token, int32_t pos, uint32_t seq) {
    ASSERT_GT(n_free(), 0u) << "the plan overfills the cache";
    cells_.push_back({token, pos, {seq}});
  }
  // The tokens of seq by position; empty positions are -1.
  std::vector<int32_t> tokens(uint32_t seq) const {
    std::vector<int32_t> out;
    for (const Cell& c : cells_) {
      if (!c.seqs.contains(seq)) continue;
      if (out.size() <= static_cast<size_t>(c.pos)) out.resize(c.pos + 1, -1);
      out[c.pos] = c.token;
    }
    return out;
  }

 private:
  uint32_t n_ctx_;
  std::vector<Cell> cells_;
};

struct Driven {
  std::map<RequestId, std::vector<int32_t>> outputs;
  std::vector<Step> steps;
  std::vector<std::vector<RequestId>> running_before;  // [steps] the requests running when it was planned
};

// Carries out steps until Done, checking every step against the cache and the limits.
Driven drive(SchedulerPlan& plan, SimCache& cache, size_t max_steps = 100000) {
  Driven run;
  const PlanLimits& lim = plan.limits();
  for (size_t n = 0; n < max_steps; ++n) {
    const uint32_t n_free = cache.n_free();
    std::vector<RequestId> running;
    for (uint32_t i = 0; i < lim.n_parallel; ++i) {
      if (auto r = plan.running(i)) running.push_back(*r);
    }
    Step step = plan.next(n_free);
    if (step.kind == Step::Kind::Done) break;
    if (step.kind != Step::Kind::Batch) {
      cache.rm(step.slot, 0);
      run.steps.push_back(std::move(step));
      run.running_before.push_back(std::move(running));
      continue;
    }
    for (const PlannedAdmission& a : step.admissions) {
      if (a.source == a.slot) {
        cache.rm(a.slot, static_cast<int32_t>(a.reused));
      } else {
        cache.rm(a.slot, 0);
        cache.cp(a.source, a.slot, static_cast<int32_t>(a.reused));
      }
    }
    EXPECT_GT(step.n_tokens(), 0u);
    EXPECT_LE(step.n_tokens(), lim.n_batch);
    EXPECT_LE(step.n_tokens(), n_free);
    std::vector<std::pair<uint32_t, int32_t>> to_sample;
    for (const PlannedChunk& c : step.chunks) {
      const auto history = plan.history(c.slot);
      // The sequence holds exactly history[0 .. first): the chunk continues it.
      const std::vector<int32_t> cached = cache.tokens(c.slot);
      EXPECT_EQ(cached, std::vector<int32_t>(history.begin(), history.begin() + c.first)) << "slot " << c.slot;
      for (uint32_t i = c.first; i < c.first + c.count; ++i) cache.add(history[i], static_cast<int32_t>(i), c.slot);
      if (c.logits) {
        EXPECT_EQ(c.first + c.count, history.size());
        to_sample.push_back({c.slot, fake_next(history)});
      }
    }
    for (auto [slot, token] : to_sample) plan.sampled(slot, token, false);
    for (FinishedRequest& f : plan.take_finished()) run.outputs[f.id] = std::move(f.generated);
    run.steps.push_back(std::move(step));
    run.running_before.push_back(std::move(running));
  }
  EXPECT_EQ(plan.n_running(), 0u);
  EXPECT_EQ(plan.n_waiting(), 0u);
  return run;
}

SchedulerPlan make_plan(PlanLimits limits) {
  auto plan = SchedulerPlan::create(limits);
  EXPECT_TRUE(plan.ok()) << plan.error().message;
  return std::move(*plan);
}

std::vector<int32_t> seq_tokens(int32_t start, size_t n) {
  std::vector<int32_t> v(n);
  std::iota(v.begin(), v.end(), start);
  return v;
}

TEST(SchedulerPlan, RejectsBadLimitsAndRequests) {
  EXPECT_FALSE(SchedulerPlan::create({.n_parallel = 0}).ok());
  EXPECT_FALSE(SchedulerPlan::create({.n_parallel = 4, .n_batch = 3}).ok());
  SchedulerPlan plan = make_plan({.n_parallel = 2, .n_batch = 8, .n_ctx = 16});
  EXPECT_FALSE(plan.submit({}, 4).ok());
  EXPECT_FALSE(plan.submit({1, 2}, 0).ok());
  auto too_long = plan.submit(seq_tokens(0, 10), 7);
  ASSERT_FALSE(too_long.ok());
  EXPECT_NE(too_long.error().message.find("16 cells"), std::string::npos) << too_long.error().message;
  EXPECT_TRUE(plan.submit(seq_tokens(0, 10), 6).ok());
}

// What GET /slots shows: the request a slot runs, its prompt, what it generated, and whether it still reads its
// prompt; nothing for an idle slot.
TEST(SchedulerPlan, ProgressSaysWhatEachSlotRuns) {
  SchedulerPlan plan = make_plan({.n_parallel = 2, .n_batch = 4, .n_ctx = 100});
  ASSERT_TRUE(plan.submit(seq_tokens(0, 6), 2).ok());
  EXPECT_FALSE(plan.progress(0).has_value());
  EXPECT_FALSE(plan.progress(1).has_value());
  uint32_t used = 0;
  auto carry_out = [&](const Step& step) {
    for (const PlannedChunk& c : step.chunks) {
      used += c.count;
      if (c.logits) plan.sampled(c.slot, 7, false);
    }
  };
  const Step first = plan.next(100);  // admitted; 4 of its 6 prompt tokens read (-b 4)
  ASSERT_EQ(first.admissions.size(), 1u);
  const uint32_t slot = first.admissions[0].slot;
  auto p = plan.progress(slot);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->id, 0u);
  EXPECT_EQ(p->n_prompt, 6u);
  EXPECT_EQ(p->n_generated, 0u);
  EXPECT_EQ(p->max_new_tokens, 2u);
  EXPECT_TRUE(p->prefilling);
  EXPECT_FALSE(plan.progress(1 - slot).has_value());
  carry_out(first);
  carry_out(plan.next(100 - used));  // the last 2 prompt tokens, and the first token sampled
  p = plan.progress(slot);
  ASSERT_TRUE(p.has_value());
  EXPECT_FALSE(p->prefilling);
  EXPECT_EQ(p->n_generated, 1u);
  carry_out(plan.next(100 - used));  // the second and last token: the request finishes
  EXPECT_FALSE(plan.progress(slot).has_value());
  EXPECT_EQ(plan.take_finished().size(), 1u);
}

TEST(SchedulerPlan, DecodeTokensFirstAndBudgetRespected) {
  SchedulerPlan plan = make_plan({.n_parallel = 3, .n_batch = 5, .n_ctx = 200});
  std::vector<std::vector<int32_t>> prompts = {seq_tokens(0, 3), seq_tokens(10, 12), seq_tokens(30, 20),
                                               seq_tokens(5, 7)};
  for (auto& p : prompts) ASSERT_TRUE(plan.submit(p, 6).ok());
  SimCache cache(200);
  Driven run = drive(plan, cache);
  size_t mixed = 0;
  for (const Step& s : run.steps) {
    ASSERT_EQ(s.kind, Step::Kind::Batch);
    bool seen_prompt = false;
    for (const PlannedChunk& c : s.chunks) {
      if (!c.decode) seen_prompt = true;
      EXPECT_FALSE(c.decode && seen_prompt) << "a decode token after a prompt chunk";
      if (c.decode) {
        EXPECT_EQ(c.count, 1u);
      }
    }
    const bool any_decode = std::any_of(s.chunks.begin(), s.chunks.end(), [](auto& c) { return c.decode; });
    if (any_decode && seen_prompt) ++mixed;
  }
  EXPECT_GT(mixed, 0u) << "prompt chunks and decode tokens never shared a batch";
  for (size_t i = 0; i < prompts.size(); ++i) EXPECT_EQ(run.outputs[i], alone(prompts[i], 6)) << "request " << i;
}

TEST(SchedulerPlan, AdmissionIsFifoAndDeferredWhenItDoesNotFit) {
  // 40 cells: request 0 (30 + 5) runs; request 1 (20 prompt) cannot fit beside it, and request 2 (2
  // tokens) would, but must not overtake request 1.
  SchedulerPlan plan = make_plan({.n_parallel = 3, .n_batch = 64, .n_ctx = 40});
  ASSERT_TRUE(plan.submit(seq_tokens(0, 30), 5).ok());
  ASSERT_TRUE(plan.submit(seq_tokens(100, 20), 5).ok());
  ASSERT_TRUE(plan.submit(seq_tokens(200, 2), 5).ok());
  SimCache cache(40);
  Driven run = drive(plan, cache);
  std::vector<RequestId> order;
  for (const Step& s : run.steps) {
    for (const PlannedAdmission& a : s.admissions) order.push_back(a.request);
  }
  EXPECT_EQ(order, (std::vector<RequestId>{0, 1, 2}));
  // Request 1 waited for request 0's cells: it was admitted only after request 0 finished.
  size_t admit1 = 0;
  for (size_t i = 0; i < run.steps.size(); ++i) {
    for (const auto& a : run.steps[i].admissions) admit1 = a.request == 1 ? i : admit1;
  }
  EXPECT_GE(admit1, 5u);
  EXPECT_EQ(plan.n_preempted(), 0u);
  EXPECT_EQ(run.outputs[2], alone(seq_tokens(200, 2), 5));
}

TEST(SchedulerPlan, PreemptsTheYoungestAndRequeuesItAheadOfLaterRequests) {
  // Three requests admitted together fill the cache as they generate; the youngest (2) is preempted,
  // readmitted before request 3, and still produces its uninterrupted output.
  const uint32_t n_ctx = 36;
  SchedulerPlan plan = make_plan({.n_parallel = 3, .n_batch = 64, .n_ctx = n_ctx});
  std::vector<std::vector<int32_t>> prompts = {seq_tokens(0, 8), seq_tokens(20, 8), seq_tokens(40, 8),
                                               seq_tokens(60, 4)};
  for (auto& p : prompts) ASSERT_TRUE(plan.submit(p, 12).ok());
  SimCache cache(n_ctx);
  Driven run = drive(plan, cache);
  std::optional<size_t> first_preempt;
  for (size_t i = 0; i < run.steps.size(); ++i) {
    if (run.steps[i].kind != Step::Kind::Preempt) continue;
    if (!first_preempt) first_preempt = i;
    const auto& running = run.running_before[i];
    EXPECT_EQ(run.steps[i].request, *std::max_element(running.begin(), running.end())) << "not the youngest";
  }
  ASSERT_TRUE(first_preempt.has_value()) << "the cache never ran out";
  EXPECT_EQ(run.steps[*first_preempt].request, 2u);
  std::vector<RequestId> order;
  for (size_t i = *first_preempt; i < run.steps.size(); ++i) {
    for (const PlannedAdmission& a : run.steps[i].admissions) order.push_back(a.request);
  }
  // Requeued in arrival order: request 2 is readmitted before request 3, which came later.
  auto at2 = std::find(order.begin(), order.end(), 2u);
  auto at3 = std::find(order.begin(), order.end(), 3u);
  ASSERT_NE(at2, order.end());
  EXPECT_LT(at2, at3);
  EXPECT_GT(plan.n_preempted(), 0u);
  for (size_t i = 0; i < prompts.size(); ++i) EXPECT_EQ(run.outputs[i], alone(prompts[i], 12)) << "request " << i;
}

TEST(SchedulerPlan, ReusesTheLongestCachedPrefix) {
  SchedulerPlan plan = make_plan({.n_parallel = 3, .n_batch = 64, .n_ctx = 200});
  const std::vector<int32_t> sys = seq_tokens(1, 10);
  auto with = [&](std::vector<int32_t> base, std::vector<int32_t> tail) {
    base.insert(base.end(), tail.begin(), tail.end());
    return base;
  };
  // Slot caches after these: [sys 10 + 3], [sys 6 + other], [unrelated].
  std::vector<std::vector<int32_t>> first = {with(sys, {90, 91, 92}), with(seq_tokens(1, 6), {70, 71, 72, 73, 74}),
                                             seq_tokens(40, 9)};
  for (auto& p : first) ASSERT_TRUE(plan.submit(p, 1).ok());
  SimCache cache(200);
  drive(plan, cache);
  // A new request with the system prompt and another question: the longest match is slot 0's 10 + 1.
  const std::vector<int32_t> next = with(sys, {90, 95, 96});
  ASSERT_TRUE(plan.submit(next, 3).ok());
  Step step = plan.next(cache.n_free());
  ASSERT_EQ(step.kind, Step::Kind::Batch);
  ASSERT_EQ(step.admissions.size(), 1u);
  EXPECT_EQ(step.admissions[0].source, 0u);
  EXPECT_EQ(step.admissions[0].reused, 11u);
  EXPECT_EQ(step.admissions[0].slot, 0u) << "the slot that holds the prefix itself is used";
  ASSERT_EQ(step.chunks.size(), 1u);
  EXPECT_EQ(step.chunks[0].first, 11u);
  EXPECT_EQ(step.chunks[0].count, 2u);
  EXPECT_EQ(plan.n_reused_tokens(), 11u);
}

// llama.cpp's cache_prompt: false. The same prompt again is computed in full, in the idle slot with the smallest
// cache (the one holding the prompt keeps it for others), and a later request still reuses that slot's prefix.
TEST(SchedulerPlan, ARequestThatReusesNothingComputesItsWholePrompt) {
  SchedulerPlan plan = make_plan({.n_parallel = 2, .n_batch = 64, .n_ctx = 200});
  const std::vector<int32_t> prompt = seq_tokens(1, 12);
  ASSERT_TRUE(plan.submit(prompt, 1).ok());
  SimCache cache(200);
  drive(plan, cache);
  ASSERT_EQ(plan.cached(0).size(), 12u) << "the first request ran in slot 0";

  ASSERT_TRUE(plan.submit(prompt, 1, /*reuse_prefix=*/false).ok());
  Step step = plan.next(cache.n_free());
  ASSERT_EQ(step.admissions.size(), 1u);
  EXPECT_EQ(step.admissions[0].reused, 0u);
  EXPECT_EQ(step.admissions[0].slot, 1u) << "the empty slot, not the one that holds the prompt";
  ASSERT_EQ(step.chunks.size(), 1u);
  EXPECT_EQ(step.chunks[0].first, 0u);
  EXPECT_EQ(step.chunks[0].count, 12u);
  EXPECT_EQ(plan.n_reused_tokens(), 0u);
}

TEST(SchedulerPlan, CopiesAPrefixFromAnotherSlot) {
  SchedulerPlan plan = make_plan({.n_parallel = 2, .n_batch = 64, .n_ctx = 200});
  const std::vector<int32_t> sys = seq_tokens(1, 12);
  std::vector<int32_t> a = sys, b = sys;
  a.push_back(50);
  b.insert(b.end(), {60, 61});
  ASSERT_TRUE(plan.submit(a, 20).ok());
  ASSERT_TRUE(plan.submit(b, 20).ok());
  SimCache cache(200);
  // Step 1 admits both: b cannot reuse a's uncomputed tokens yet.
  Step s1 = plan.next(cache.n_free());
  ASSERT_EQ(s1.admissions.size(), 2u);
  EXPECT_EQ(s1.admissions[1].reused, 0u);
  // Later requests with the same system prompt copy it from a running slot.
  SchedulerPlan plan2 = make_plan({.n_parallel = 2, .n_batch = 64, .n_ctx = 200});
  ASSERT_TRUE(plan2.submit(a, 20).ok());
  SimCache cache2(200);
  Step t1 = plan2.next(cache2.n_free());
  for (const auto& c : t1.chunks)
    for (uint32_t i = c.first; i < c.first + c.count; ++i) cache2.add(plan2.history(c.slot)[i], i, c.slot);
  plan2.sampled(0, 7, false);
  ASSERT_TRUE(plan2.submit(b, 3).ok());
  Step t2 = plan2.next(cache2.n_free());
  ASSERT_EQ(t2.admissions.size(), 1u);
  EXPECT_EQ(t2.admissions[0].slot, 1u);
  EXPECT_EQ(t2.admissions[0].source, 0u);
  EXPECT_EQ(t2.admissions[0].reused, 12u);
}

TEST(SchedulerPlan, EveryRunningRequestProgressesWithinABound) {
  // Four long prompts, a batch far smaller than them: round-robin shares keep every prefilling slot
  // moving (at least one token per step while the budget covers them all).
  SchedulerPlan plan = make_plan({.n_parallel = 4, .n_batch = 6, .n_ctx = 1000});
  for (int r = 0; r < 4; ++r) ASSERT_TRUE(plan.submit(seq_tokens(r * 100, 40 + r * 7), 4).ok());
  SimCache cache(1000);
  Driven run = drive(plan, cache);
  std::map<RequestId, size_t> last_progress;
  std::vector<RequestId> slot_req(4);
  std::vector<bool> busy(4, false);
  for (size_t i = 0; i < run.steps.size(); ++i) {
    const Step& s = run.steps[i];
    for (const auto& a : s.admissions) {
      slot_req[a.slot] = a.request;
      busy[a.slot] = true;
      last_progress[a.request] = i;
    }
    for (const auto& c : s.chunks) {
      const RequestId r = slot_req[c.slot];
      EXPECT_LE(i - last_progress[r], 2u) << "request " << r << " starved until step " << i;
      last_progress[r] = i;
    }
  }
  for (int r = 0; r < 4; ++r) EXPECT_EQ(run.outputs[r], alone(seq_tokens(r * 100, 40 + r * 7), 4));
}

TEST(SchedulerPlan, RandomWorkloadsMatchAloneOutputs) {
  // Many shapes under cache pressure (shared prefixes, tight caches, small batches): every request
  // finishes with its uninterrupted output and the cache is never overfilled (checked in drive()).
  std::mt19937 rng(7);
  uint64_t preempted = 0, evicted = 0, reused = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const uint32_t n_parallel = 1 + rng() % 4;
    const uint32_t n_batch = n_parallel + rng() % 12;
    const uint32_t n_ctx = 24 + rng() % 60;
    SchedulerPlan plan = make_plan({.n_parallel = n_parallel, .n_batch = n_batch, .n_ctx = n_ctx});
    const std::vector<int32_t> sys = seq_tokens(1, 4 + rng() % 8);
    std::vector<std::pair<std::vector<int32_t>, uint32_t>> reqs;
    const int n_req = 1 + rng() % 8;
    for (int r = 0; r < n_req; ++r) {
      std::vector<int32_t> p = rng() % 2 ? sys : std::vector<int32_t>{};
      for (uint32_t k = 0, n = 1 + rng() % 10; k < n; ++k) p.push_back(static_cast<int32_t>(rng() % 50));
      const uint32_t max_new = 1 + rng() % 12;
      if (p.size() + max_new > n_ctx) continue;
      ASSERT_TRUE(plan.submit(p, max_new).ok());
      reqs.push_back({p, max_new});
    }
    SimCache cache(n_ctx);
    Driven run = drive(plan, cache);
    ASSERT_EQ(run.outputs.size(), reqs.size()) << "trial " << trial;
    for (size_t i = 0; i < reqs.size(); ++i) {
      EXPECT_EQ(run.outputs[i], alone(reqs[i].first, reqs[i].second)) << "trial " << trial << " request " << i;
    }
    preempted += plan.n_preempted();
    evicted += plan.n_evicted();
    reused += plan.n_reused_tokens();
  }
  // The workloads did exercise every path.
  EXPECT_GT(preempted, 0u);
  EXPECT_GT(evicted, 0u);
  EXPECT_GT(reused, 0u);
}

TEST(SchedulerPlan, StopEndsARequestEarly) {
  SchedulerPlan plan = make_plan({.n_parallel = 1, .n_batch = 8, .n_ctx = 64});
  ASSERT_TRUE(plan.submit({1, 2, 3}, 10).ok());
  Step s = plan.next(64);
  ASSERT_EQ(s.chunks.size(), 1u);
  EXPECT_FALSE(plan.sampled(0, 5, false));
  plan.next(61);
  EXPECT_TRUE(plan.sampled(0, 9, true));
  auto done = plan.take_finished();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].generated, (std::vector<int32_t>{5, 9}));
  EXPECT_EQ(plan.next(60).kind, Step::Kind::Done);
}

}  // namespace
}  // namespace infertune

namespace infertune {
namespace {

// prefill_chunk bounds the prompt tokens of a step that carries decode tokens, not of one that has none; a
// waiting request can be cancelled out of the queue, a running one out of its slot (its cache dropped).
TEST(SchedulerPlanChunks, PrefillChunkBoundsPromptTokensBesideDecodes) {
  auto plan = SchedulerPlan::create({.n_parallel = 2, .n_batch = 512, .n_ctx = 1024, .prefill_chunk = 8});
  ASSERT_TRUE(plan.ok());
  ASSERT_TRUE(plan->submit(std::vector<int32_t>(40, 3), 20).ok());
  Step first = plan->next(1024);
  ASSERT_EQ(first.chunks.size(), 1u);
  EXPECT_EQ(first.chunks[0].count, 40u);  // nothing decodes yet: the whole prompt
  plan->sampled(0, 7, false);
  ASSERT_TRUE(plan->submit(std::vector<int32_t>(30, 4), 5).ok());
  for (int step = 0; step < 3; ++step) {
    Step s = plan->next(1024 - 41 - 8 * step);
    uint32_t prompt_tokens = 0;
    for (const PlannedChunk& c : s.chunks) prompt_tokens += c.decode ? 0 : c.count;
    EXPECT_EQ(prompt_tokens, 8u) << "step " << step;
    plan->sampled(0, 7, false);
  }
}

TEST(SchedulerPlanChunks, CancelTakesARequestOutOfTheQueueOrItsSlot) {
  auto plan = SchedulerPlan::create({.n_parallel = 1, .n_batch = 64, .n_ctx = 256});
  ASSERT_TRUE(plan.ok());
  const RequestId running = *plan->submit({1, 2, 3}, 10);
  const RequestId waiting = *plan->submit({4, 5}, 10);
  plan->next(256);
  EXPECT_EQ(plan->running(0), running);
  const auto queued = plan->cancel(waiting);
  EXPECT_TRUE(queued.found);
  EXPECT_FALSE(queued.slot);
  EXPECT_EQ(plan->n_waiting(), 0u);
  const auto slot = plan->cancel(running);
  EXPECT_TRUE(slot.found);
  EXPECT_EQ(slot.slot, 0u);
  EXPECT_FALSE(plan->running(0));
  EXPECT_TRUE(plan->cached(0).empty());
  EXPECT_FALSE(plan->cancel(running).found);
  EXPECT_EQ(plan->next(256).kind, Step::Kind::Done);
}

}  // namespace
}  // namespace infertune
