#pragma once
// One streamed request and what it measured: loadgen sends every request with "stream": true (and asks for
// the usage chunk), timestamps the arrival of each chunk that carries text, and reads the token count from
// the usage (the number of text chunks when the server sends none).
#include <httplib.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "bench/loadgen/load_options.h"
#include "bench/loadgen/prompt_source.h"

namespace infertune {

struct RequestOutcome {
  bool ok = false;
  std::string error;  // the status and the server's message, or the transport error
  std::chrono::steady_clock::time_point start, end;
  double ttft_s = 0;                 // start -> first text chunk
  std::vector<double> chunk_gaps_s;  // between text chunks (inter-token latency where a chunk is a token)
  uint64_t output_tokens = 0;
  uint64_t prompt_tokens = 0;  // from the usage, 0 when the server sends none
  double e2e_s() const { return std::chrono::duration<double>(end - start).count(); }
  // Time per output token after the first: (e2e - ttft) / (tokens - 1); 0 for one token.
  double tpot_s() const { return output_tokens > 1 ? (e2e_s() - ttft_s) / static_cast<double>(output_tokens - 1) : 0; }
};

// The body of a streamed request for `prompt`.
nlohmann::json request_body(const LoadOptions& options, const Prompt& prompt);

// Sends it on `client` (one per client thread: connections are kept alive) and waits for the end.
RequestOutcome send_streamed(httplib::Client& client, const LoadOptions& options, const Prompt& prompt);

// The path of the API's route ("/v1/completions", "/v1/chat/completions").
std::string api_path(LoadApi api);

// A client for options.url with the key, the timeouts and keep-alive set.
std::unique_ptr<httplib::Client> make_client(const LoadOptions& options);

}  // namespace infertune
