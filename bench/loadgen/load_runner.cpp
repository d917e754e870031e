#include "bench/loadgen/load_runner.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <random>
#include <thread>

namespace infertune {

using Clock = std::chrono::steady_clock;

std::vector<LoadLevel> load_levels(const LoadOptions& options) {
  std::vector<LoadLevel> levels;
  for (uint32_t c : options.concurrency) levels.push_back({.kind = LoadLevel::Kind::closed, .concurrency = c});
  for (double r : options.rates) levels.push_back({.kind = LoadLevel::Kind::open, .rate = r});
  for (uint32_t i = 0; i < levels.size(); ++i) levels[i].index = i;
  return levels;
}

namespace {

// The prompts of a level, drawn up front so that the clients' threads share nothing but the outcomes.
std::vector<Prompt> draw_prompts(PromptSource& source, size_t n, std::mt19937_64& rng) {
  std::vector<Prompt> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) out.push_back(source.next(rng));
  return out;
}

double wall_of(const std::vector<RequestOutcome>& outcomes) {
  if (outcomes.empty()) return 0;
  auto first = outcomes.front().start;
  auto last = outcomes.front().end;
  for (const RequestOutcome& o : outcomes) {
    first = std::min(first, o.start);
    last = std::max(last, o.end);
  }
  return std::chrono::duration<double>(last - first).count();
}

void run_closed(const LoadOptions& options, uint32_t concurrency, const std::vector<Prompt>& prompts,
                std::vector<RequestOutcome>& outcomes) {
  std::atomic<size_t> next{0};
  std::mutex mutex;
  std::vector<std::thread> clients;
  for (uint32_t c = 0; c < concurrency; ++c) {
    clients.emplace_back([&] {
      auto client = make_client(options);
      for (size_t i = next++; i < prompts.size(); i = next++) {
        RequestOutcome o = send_streamed(*client, options, prompts[i]);
        const std::lock_guard lock(mutex);
        outcomes.push_back(std::move(o));
      }
    });
  }
  for (std::thread& t : clients) t.join();
}

void run_open(const LoadOptions& options, double rate, const std::vector<Prompt>& prompts, std::mt19937_64& rng,
              std::vector<RequestOutcome>& outcomes) {
  std::exponential_distribution<double> gap(rate);
  std::mutex mutex;
  std::vector<std::thread> requests;
  auto at = Clock::now();
  for (const Prompt& prompt : prompts) {
    std::this_thread::sleep_until(at);
    requests.emplace_back([&options, &prompt, &mutex, &outcomes] {
      auto client = make_client(options);  // a user of its own: its own connection
      RequestOutcome o = send_streamed(*client, options, prompt);
      const std::lock_guard lock(mutex);
      outcomes.push_back(std::move(o));
    });
    at += std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(gap(rng)));
  }
  for (std::thread& t : requests) t.join();
}

}  // namespace

LevelRun run_level(const LoadOptions& options, const LoadLevel& level, PromptSource& prompts) {
  // Prompts differ between levels (and from the warm-up's): a server that caches prompts (llama-server's
  // prompt cache, our slots' prefixes) must not find a later level's prompts already computed.
  std::mt19937_64 rng(options.seed * 1000003u + level.index);
  LevelRun run{.level = level};
  {
    auto client = make_client(options);
    for (const Prompt& p : draw_prompts(prompts, options.warmup, rng)) send_streamed(*client, options, p);
  }
  const std::vector<Prompt> measured = draw_prompts(prompts, options.requests, rng);
  if (level.kind == LoadLevel::Kind::closed) {
    run_closed(options, level.concurrency, measured, run.outcomes);
  } else {
    run_open(options, level.rate, measured, rng, run.outcomes);
  }
  run.wall_s = wall_of(run.outcomes);
  return run;
}

}  // namespace infertune
