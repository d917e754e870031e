#include "engine/server/server_metrics.h"

#include <fmt/format.h>

namespace infertune {

void LatencyHistogram::observe(double seconds) {
  for (size_t i = 0; i < kBoundsSeconds.size(); ++i) {
    if (seconds <= kBoundsSeconds[i]) ++buckets_[i];
  }
  sum_ += seconds;
  ++count_;
}

std::string LatencyHistogram::exposition(const std::string& name, const std::string& help) const {
  std::string out = fmt::format("# HELP {} {}\n# TYPE {} histogram\n", name, help, name);
  for (size_t i = 0; i < kBoundsSeconds.size(); ++i) {
    out += fmt::format("{}_bucket{{le=\"{}\"}} {}\n", name, kBoundsSeconds[i], buckets_[i]);
  }
  out += fmt::format("{}_bucket{{le=\"+Inf\"}} {}\n{}_sum {}\n{}_count {}\n", name, count_, name, sum_, name, count_);
  return out;
}

void ServerMetrics::request_finished(const std::string& endpoint, int status) {
  const std::lock_guard lock(mutex_);
  ++requests_[{endpoint, status}];
}

void ServerMetrics::tokens(uint64_t prompt, uint64_t generated) {
  const std::lock_guard lock(mutex_);
  prompt_tokens_ += prompt;
  generated_tokens_ += generated;
}

void ServerMetrics::prompt_tokens_reused(uint64_t n) {
  const std::lock_guard lock(mutex_);
  reused_tokens_ += n;
}

void ServerMetrics::batch_steps(uint64_t n) {
  const std::lock_guard lock(mutex_);
  batch_steps_ += n;
}

uint64_t ServerMetrics::batch_steps() const {
  const std::lock_guard lock(mutex_);
  return batch_steps_;
}

void ServerMetrics::request_cancelled() {
  const std::lock_guard lock(mutex_);
  ++cancelled_;
}

uint64_t ServerMetrics::cancelled() const {
  const std::lock_guard lock(mutex_);
  return cancelled_;
}

void ServerMetrics::time_to_first_token(double seconds) {
  const std::lock_guard lock(mutex_);
  ttft_.observe(seconds);
}

void ServerMetrics::inter_token_latency(double seconds) {
  const std::lock_guard lock(mutex_);
  itl_.observe(seconds);
}

void ServerMetrics::set_gauges(const ServerGauges& gauges) {
  const std::lock_guard lock(mutex_);
  gauges_ = gauges;
}

ServerGauges ServerMetrics::gauges() const {
  const std::lock_guard lock(mutex_);
  return gauges_;
}

namespace {

std::string counter(const char* name, const char* help, uint64_t value) {
  return fmt::format("# HELP {} {}\n# TYPE {} counter\n{} {}\n", name, help, name, name, value);
}

std::string gauge(const char* name, const char* help, uint64_t value) {
  return fmt::format("# HELP {} {}\n# TYPE {} gauge\n{} {}\n", name, help, name, name, value);
}

}  // namespace

std::string ServerMetrics::exposition() const {
  const std::lock_guard lock(mutex_);
  std::string out =
      "# HELP infertune_requests_total HTTP requests answered, by route and status.\n"
      "# TYPE infertune_requests_total counter\n";
  for (const auto& [key, count] : requests_) {
    out += fmt::format("infertune_requests_total{{endpoint=\"{}\",status=\"{}\"}} {}\n", key.first, key.second, count);
  }
  out += counter("infertune_prompt_tokens_total", "Prompt tokens of the requests admitted.", prompt_tokens_);
  out += counter("infertune_prompt_tokens_reused_total", "Prompt tokens taken from a cached prefix, not computed.",
                 reused_tokens_);
  out += counter("infertune_generated_tokens_total", "Tokens generated.", generated_tokens_);
  out += counter("infertune_batch_steps_total",
                 "Batches the model decoded: each carries the running requests' next tokens and prompt tokens.",
                 batch_steps_);
  out += counter("infertune_requests_cancelled_total",
                 "Requests ended before their end: the client went away or a stop string matched.", cancelled_);
  out += gauge("infertune_requests_waiting", "Requests queued for a slot.", gauges_.waiting);
  out += gauge("infertune_slots_busy", "Slots running a request.", gauges_.busy_slots);
  out += gauge("infertune_slots", "Slots (-np).", gauges_.slots);
  out += gauge("infertune_kv_cells_used", "KV cache cells holding a token.", gauges_.kv_cells_used);
  out += gauge("infertune_kv_cells", "KV cache cells (-c).", gauges_.kv_cells_total);
  out += ttft_.exposition("infertune_time_to_first_token_seconds", "From a request's arrival to its first token.");
  out += itl_.exposition("infertune_inter_token_latency_seconds", "Between two tokens of one request.");
  return out;
}

}  // namespace infertune
