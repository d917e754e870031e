#pragma once
// What `infertune loadgen` drives and how: the endpoint, the load levels (closed loop at fixed concurrency,
// open loop at Poisson arrival rates), the prompts and the service-level objective that goodput counts against.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/result.h"

namespace infertune {

enum class LoadApi { completions, chat };

// Prompt lengths in tokens: one value, or a range drawn uniformly ("90", "50:200").
struct LengthRange {
  uint32_t low = 90;
  uint32_t high = 90;
};
Result<LengthRange> parse_length_range(std::string_view text);

// "500ms", "0.5s", "2" (seconds) -> seconds.
Result<double> parse_duration_seconds(std::string_view text);

struct LoadOptions {
  std::string url = "http://127.0.0.1:8080";  // the server; requests go to /v1/completions or /v1/chat/completions
  std::string api_key;
  std::string model;  // the model name sent; empty: the first of /v1/models
  LoadApi api = LoadApi::completions;
  std::vector<uint32_t> concurrency;  // closed-loop levels: this many clients, each sending as its reply ends
  std::vector<double> rates;          // open-loop levels: requests per second, Poisson arrivals
  uint32_t requests = 32;             // measured requests per level
  uint32_t warmup = 2;                // requests sent (one at a time) before each level and not measured
  LengthRange prompt_tokens;
  uint32_t max_tokens = 32;
  double shared_prefix = 0;  // the fraction of every synthetic prompt that is one shared prefix (a system prompt)
  std::string prompts_file;  // JSONL of {"prompt": ...} or {"messages": [...]}, instead of synthetic prompts
  bool ignore_eos = true;    // ask the server to generate max_tokens whatever the model samples (llama.cpp's)
  std::optional<double> slo_ttft_s;
  std::optional<double> slo_itl_s;  // per-request mean time between output tokens (TPOT)
  uint64_t seed = 1;
  int timeout_s = 600;
};

}  // namespace infertune
