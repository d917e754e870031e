#pragma once
// What /metrics reports, in Prometheus' text exposition format (version 0.0.4): counters of requests by
// outcome and of tokens, gauges of the queue, the busy slots and the KV cells, and histograms of the time
// to first token and of the time between tokens. The serving loop and the HTTP handlers update it from
// their threads; every method is thread-safe.
#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace infertune {

// Cumulative buckets as Prometheus keeps them: counts of observations <= each bound, their sum and count.
class LatencyHistogram {
 public:
  static constexpr std::array<double, 14> kBoundsSeconds = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                                            1,     2.5,  5,     10,   30,  60,   120};
  void observe(double seconds);
  // "# HELP", "# TYPE" and the _bucket{le=...}, _sum and _count lines of metric `name`.
  std::string exposition(const std::string& name, const std::string& help) const;
  uint64_t count() const { return count_; }

 private:
  std::array<uint64_t, kBoundsSeconds.size()> buckets_{};
  double sum_ = 0;
  uint64_t count_ = 0;
};

struct ServerGauges {
  uint64_t waiting = 0;         // requests queued for a slot
  uint64_t busy_slots = 0;      // requests running
  uint64_t slots = 0;           // -np
  uint64_t kv_cells_used = 0;   // cells holding a token (running requests and idle slots' cached prefixes)
  uint64_t kv_cells_total = 0;  // -c
};

class ServerMetrics {
 public:
  void request_finished(const std::string& endpoint, int status);
  void tokens(uint64_t prompt, uint64_t generated);
  void prompt_tokens_reused(uint64_t n);
  void batch_steps(uint64_t n);  // batches the model decoded
  uint64_t batch_steps() const;
  void request_cancelled();  // a client went away, or a stop string ended it
  uint64_t cancelled() const;
  void time_to_first_token(double seconds);
  void inter_token_latency(double seconds);
  void set_gauges(const ServerGauges& gauges);
  ServerGauges gauges() const;

  std::string exposition() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;  // (endpoint, HTTP status) -> count
  uint64_t prompt_tokens_ = 0;
  uint64_t generated_tokens_ = 0;
  uint64_t reused_tokens_ = 0;
  uint64_t batch_steps_ = 0;
  uint64_t cancelled_ = 0;
  LatencyHistogram ttft_;
  LatencyHistogram itl_;
  ServerGauges gauges_;
};

}  // namespace infertune
