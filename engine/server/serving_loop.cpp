#include "engine/server/serving_loop.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

namespace infertune {

using Clock = std::chrono::steady_clock;

RequestChannel::Update RequestChannel::wait(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  ready_.wait_for(lock, timeout, [&] { return finished_ || !tokens_.empty(); });
  Update u;
  u.tokens = std::exchange(tokens_, {});
  u.finished = finished_;
  u.reason = reason_;
  u.error = error_;
  return u;
}

void Doorbell::ring() {
  {
    const std::lock_guard lock(mutex_);
    ++rings_;
  }
  rung_.notify_all();
}

uint64_t Doorbell::rings() const {
  const std::lock_guard lock(mutex_);
  return rings_;
}

void Doorbell::wait(uint64_t seen, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  rung_.wait_for(lock, timeout, [&] { return rings_ != seen; });
}

void RequestChannel::push(GeneratedToken token) {
  {
    const std::lock_guard lock(mutex_);
    tokens_.push_back(std::move(token));
  }
  ready_.notify_all();
  if (doorbell_) doorbell_->ring();
}

void RequestChannel::finish(FinishReason reason, std::string error) {
  {
    const std::lock_guard lock(mutex_);
    if (finished_) return;
    finished_ = true;
    reason_ = reason;
    error_ = std::move(error);
  }
  ready_.notify_all();
  if (doorbell_) doorbell_->ring();
}

GeneratedToken token_logprobs(int32_t token, std::span<const float> logits, uint32_t top) {
  GeneratedToken out;
  out.token = token;
  if (logits.empty()) return out;
  const float max = *std::max_element(logits.begin(), logits.end());
  double sum = 0;
  for (float l : logits) sum += std::exp(static_cast<double>(l) - max);
  const auto log_norm = static_cast<float>(max + std::log(sum));
  out.logprob = logits[static_cast<size_t>(token)] - log_norm;
  std::vector<int32_t> ids(logits.size());
  std::iota(ids.begin(), ids.end(), 0);
  const size_t n = std::min<size_t>(top, ids.size());
  std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(n), ids.end(), [&](int32_t a, int32_t b) {
    return logits[static_cast<size_t>(a)] > logits[static_cast<size_t>(b)] ||
           (logits[static_cast<size_t>(a)] == logits[static_cast<size_t>(b)] && a < b);
  });
  for (size_t i = 0; i < n; ++i) out.top.push_back({ids[i], logits[static_cast<size_t>(ids[i])] - log_norm});
  return out;
}

ServingLoop::ServingLoop(Context& ctx, SchedulerParams params, LoopLimits limits, ServerMetrics& metrics)
    : ctx_(&ctx), params_(std::move(params)), limits_(limits), metrics_(&metrics) {
  params_.on_token = nullptr;
  params_.on_logits = [this](RequestId id, int32_t token, std::span<const float> logits) {
    on_sampled(id, token, logits);
  };
}

ServingLoop::~ServingLoop() { stop(); }

Status ServingLoop::start() {
  auto scheduler = Scheduler::create(*ctx_, params_);
  if (!scheduler) return scheduler.error();
  scheduler_.emplace(std::move(*scheduler));
  publish_gauges();
  thread_ = std::thread([this] { run(); });
  return {};
}

ServingLoop::Submitted ServingLoop::submit(ServeJob job) {
  auto channel = std::make_shared<RequestChannel>();
  channel->doorbell_ = job.doorbell;  // before any token can be pushed
  {
    const std::lock_guard lock(mutex_);
    if (draining_ || stopping_) return {nullptr, Refusal::draining};
    // Jobs that would wait for a slot: those queued now, plus these new ones beyond the free slots.
    const size_t running = in_scheduler_ - waiting_;
    const size_t free_slots = params_.n_parallel > running ? params_.n_parallel - running : 0;
    const size_t pending = incoming_.size() + 1;
    const size_t would_wait = waiting_ + (pending > free_slots ? pending - free_slots : 0);
    if (would_wait > limits_.max_waiting) return {nullptr, Refusal::queue_full};
    incoming_.emplace_back(std::move(job), channel);
  }
  wake_.notify_all();
  return {channel, Refusal::none};
}

void ServingLoop::enable_embeddings(Context& ctx, Pooling pooling) { embeddings_.emplace(ctx, pooling); }

ServingLoop::SubmittedEmbedding ServingLoop::submit_embeddings(EmbedJob job) {
  auto ticket = std::make_shared<EmbeddingTicket>();
  {
    const std::lock_guard lock(mutex_);
    if (draining_ || stopping_ || !embeddings_) return {nullptr, Refusal::draining};
    if (incoming_embeddings_.size() + embeddings_held_ >= limits_.max_waiting) return {nullptr, Refusal::queue_full};
    incoming_embeddings_.emplace_back(std::move(job), ticket);
  }
  wake_.notify_all();
  return {ticket, Refusal::none};
}

void ServingLoop::cancel(const std::shared_ptr<RequestChannel>& channel) {
  if (!channel) return;
  {
    const std::lock_guard lock(mutex_);
    cancels_.push_back(channel);
  }
  wake_.notify_all();
}

void ServingLoop::drain() {
  const std::lock_guard lock(mutex_);
  draining_ = true;
}

bool ServingLoop::wait_idle(Clock::time_point deadline) {
  std::unique_lock lock(mutex_);
  return idle_.wait_until(lock, deadline, [&] { return !has_work(); });
}

void ServingLoop::stop() {
  {
    const std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::vector<std::pair<ServeJob, std::shared_ptr<RequestChannel>>> left;
  {
    const std::lock_guard lock(mutex_);
    left = std::exchange(incoming_, {});
  }
  for (auto& [job, channel] : left) channel->finish(FinishReason::cancelled);
  for (auto& [id, channel] : active_) channel->finish(FinishReason::cancelled);
  active_.clear();
  std::vector<std::pair<EmbedJob, std::shared_ptr<EmbeddingTicket>>> left_embeddings;
  {
    const std::lock_guard lock(mutex_);
    left_embeddings = std::exchange(incoming_embeddings_, {});
  }
  for (auto& [job, ticket] : left_embeddings) ticket->finish(fail("the server is stopping"));
  if (embeddings_) embeddings_->fail_all("the server is stopping");
}

bool ServingLoop::has_work() const { return !incoming_.empty() || !incoming_embeddings_.empty() || busy_; }

void ServingLoop::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stopping_ || !cancels_.empty() || has_work(); });
    if (!busy_ && !incoming_.empty()) gather_arrivals(lock);
    if (stopping_) return;
    auto jobs = std::exchange(incoming_, {});
    auto cancels = std::exchange(cancels_, {});
    auto embedding_jobs = std::exchange(incoming_embeddings_, {});
    embeddings_held_ += embedding_jobs.size();
    // taken jobs are not idle time, though no longer incoming
    busy_ = busy_ || !jobs.empty() || !embedding_jobs.empty();
    lock.unlock();
    admit(jobs);
    for (auto& [job, ticket] : embedding_jobs) embeddings_->add(std::move(job), std::move(ticket));
    apply_cancels(cancels);
    step();
    if (embeddings_) embeddings_->step();
    publish_gauges();
    lock.lock();
    in_scheduler_ = active_.size();
    waiting_ = scheduler_ ? scheduler_->plan().n_waiting() : 0;
    embeddings_held_ = embeddings_ ? embeddings_->size() : 0;
    busy_ = !active_.empty() || embeddings_held_ > 0;
    if (!has_work()) idle_.notify_all();
  }
}

void ServingLoop::gather_arrivals(std::unique_lock<std::mutex>& lock) {
  if (limits_.gather.count() <= 0) return;
  const auto deadline = std::chrono::steady_clock::now() + 5 * limits_.gather;
  for (size_t seen = incoming_.size(); !stopping_; seen = incoming_.size()) {
    const auto quiet_until = std::min(deadline, std::chrono::steady_clock::now() + limits_.gather);
    wake_.wait_until(lock, quiet_until, [&] { return stopping_ || incoming_.size() > seen; });
    if (incoming_.size() == seen || std::chrono::steady_clock::now() >= deadline) return;
  }
}

void ServingLoop::admit(std::vector<std::pair<ServeJob, std::shared_ptr<RequestChannel>>>& jobs) {
  for (auto& [job, channel] : jobs) {
    if (!scheduler_) {
      channel->finish(FinishReason::error, "the server's scheduler could not be restarted after a failed step");
      continue;
    }
    const size_t n_prompt = job.prompt.size();
    auto id = scheduler_->submit({.prompt = std::move(job.prompt),
                                  .max_new_tokens = job.max_tokens,
                                  .sampling = job.sampling,
                                  .ignore_eos = job.ignore_eos,
                                  .reuse_cached_prefix = job.cache_prompt,
                                  .grammar = std::move(job.grammar)});
    if (!id) {
      channel->finish(FinishReason::error, id.error().message);
      continue;
    }
    channel->id_ = *id;
    channel->last_token_ = job.arrival;  // the first token's latency counts from the arrival
    active_[*id] = channel;
    options_[*id] = {.sampling = job.sampling, .ignore_eos = job.ignore_eos, .top_logprobs = job.top_logprobs};
    metrics_->tokens(n_prompt, 0);
  }
}

void ServingLoop::apply_cancels(const std::vector<std::shared_ptr<RequestChannel>>& cancels) {
  for (const auto& channel : cancels) {
    const auto it = std::find_if(active_.begin(), active_.end(), [&](const auto& a) { return a.second == channel; });
    if (it == active_.end()) {
      channel->finish(FinishReason::cancelled);  // still incoming (taken this round) or already finished
      continue;
    }
    auto cancelled = scheduler_->cancel(it->first);
    if (!cancelled) {
      channel->finish(FinishReason::cancelled);
      fail_all(cancelled.error().message);
      return;
    }
    channel->finish(FinishReason::cancelled);
    metrics_->request_cancelled();
    options_.erase(it->first);
    active_.erase(it);
  }
}

void ServingLoop::on_sampled(RequestId id, int32_t token, std::span<const float> logits) {
  const auto it = active_.find(id);
  if (it == active_.end()) return;
  RequestChannel& channel = *it->second;
  const auto top = options_[id].top_logprobs;
  GeneratedToken t = top ? token_logprobs(token, logits, *top) : GeneratedToken{.token = token, .top = {}};
  t.end_of_generation = scheduler_->is_end_token(token);
  const auto now = Clock::now();
  t.at = now;
  if (!channel.first_token_sent_) {
    if (const auto running = running_slot(id)) {
      t.slot = static_cast<int32_t>(running->first);
      t.prompt_cached = std::min(running->second.n_reused, running->second.n_prompt);
    }
    t.prompt_started = channel.prompt_started_.value_or(step_started_);  // unset: its slot came in this step
  }
  const double since = std::chrono::duration<double>(now - channel.last_token_).count();
  if (channel.first_token_sent_) {
    metrics_->inter_token_latency(since);
  } else {
    metrics_->time_to_first_token(since);
    channel.first_token_sent_ = true;
  }
  channel.last_token_ = now;
  metrics_->tokens(0, 1);
  channel.push(std::move(t));
}

std::optional<std::pair<uint32_t, SchedulerPlan::Progress>> ServingLoop::running_slot(RequestId id) const {
  const SchedulerPlan& plan = scheduler_->plan();
  for (uint32_t slot = 0; slot < params_.n_parallel; ++slot) {
    const auto progress = plan.progress(slot);
    if (progress && progress->id == id) return std::pair(slot, *progress);
  }
  return std::nullopt;
}

void ServingLoop::step() {
  if (active_.empty() || !scheduler_) return;
  step_started_ = Clock::now();
  auto more = scheduler_->step();
  if (!more) {
    fail_all(more.error().message);
    return;
  }
  note_prompt_starts();
  // Counted before any job finishes: a client that reads /metrics after its reply sees the step that made it.
  publish_counters();
  for (GenerationResult& r : scheduler_->take_finished()) {
    const auto it = active_.find(r.id);
    if (it == active_.end()) continue;
    const bool ended = !r.tokens.empty() && scheduler_->is_end_token(r.tokens.back());
    it->second->finish(ended ? FinishReason::stop : FinishReason::length);
    options_.erase(r.id);
    active_.erase(it);
  }
}

// A request that has a slot and no start yet got its slot in this step.
void ServingLoop::note_prompt_starts() {
  const SchedulerPlan& plan = scheduler_->plan();
  for (uint32_t slot = 0; slot < params_.n_parallel; ++slot) {
    const auto progress = plan.progress(slot);
    if (!progress) continue;
    const auto it = active_.find(progress->id);
    if (it != active_.end() && !it->second->prompt_started_) it->second->prompt_started_ = step_started_;
  }
}

void ServingLoop::publish_counters() {
  const SchedulerStats& now = scheduler_->stats();
  metrics_->prompt_tokens_reused(now.reused_tokens - stats_seen_.reused_tokens);
  metrics_->batch_steps(now.steps - stats_seen_.steps);
  stats_seen_ = now;
}

// A failed step leaves the scheduler unusable: every job fails with the message, and a new scheduler (with
// empty sequences) takes the next ones.
void ServingLoop::fail_all(const std::string& message) {
  for (auto& [id, channel] : active_) channel->finish(FinishReason::error, message);
  active_.clear();
  options_.clear();
  scheduler_.reset();
  stats_seen_ = {};
  auto fresh = Scheduler::create(*ctx_, params_);
  if (fresh) scheduler_.emplace(std::move(*fresh));
}

void ServingLoop::publish_gauges() {
  if (!scheduler_) return;
  publish_slots();
  const SchedulerPlan& plan = scheduler_->plan();
  metrics_->set_gauges({.waiting = plan.n_waiting(),
                        .busy_slots = plan.n_running(),
                        .slots = params_.n_parallel,
                        .kv_cells_used = ctx_->kv_cache().n_used(),
                        .kv_cells_total = ctx_->kv_cache().n_cells()});
}

void ServingLoop::publish_slots() {
  const SchedulerPlan& plan = scheduler_->plan();
  std::vector<SlotState> now(params_.n_parallel);
  for (uint32_t i = 0; i < now.size(); ++i) {
    SlotState& slot = now[i];
    slot.id = i;
    slot.n_cached = static_cast<uint32_t>(plan.cached(i).size());
    slot.running = plan.progress(i);
    if (!slot.running) continue;
    const auto options = options_.find(slot.running->id);
    if (options == options_.end()) continue;
    slot.sampling = options->second.sampling;
    slot.ignore_eos = options->second.ignore_eos;
    slot.n_probs = options->second.top_logprobs.value_or(0);
  }
  const std::lock_guard lock(slots_mutex_);
  slots_ = std::move(now);
}

std::vector<SlotState> ServingLoop::slots() const {
  const std::lock_guard lock(slots_mutex_);
  return slots_;
}

}  // namespace infertune
