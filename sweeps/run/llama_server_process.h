#pragma once
// llama.cpp's llama-server as the server of a served trial on `engine: llama.cpp`: started with the trial's flags on
// a free loopback port, in a process group of its own (WorkerProcess), ready once GET /health answers 200, and
// killed with its group when the object goes. A thread drains its stdout and stderr the whole time, so that its
// request logging never fills a pipe and blocks it; the last stderr lines explain a server that exits or never
// becomes ready.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "kernels/result.h"
#include "sweeps/run/worker_process.h"

namespace infertune {

class LlamaServerProcess {
 public:
  // argv: the server and its flags, without --host and --port (added here). Waits at most `patience` for the
  // model to load, returning early (with an error) when `stop` is set or the server exits.
  static Result<std::unique_ptr<LlamaServerProcess>> start(const std::vector<std::string>& argv,
                                                           std::chrono::seconds patience,
                                                           const std::atomic<bool>* stop);
  ~LlamaServerProcess();
  LlamaServerProcess(const LlamaServerProcess&) = delete;
  LlamaServerProcess& operator=(const LlamaServerProcess&) = delete;

  const std::string& url() const { return url_; }
  // "" while the server runs; once it has exited by itself, how it ended and its last stderr lines.
  std::string exit_reason();
  // The server's peak resident set so far (its /proc status), or nullopt where that cannot be read.
  std::optional<int64_t> peak_rss_bytes() const;

 private:
  LlamaServerProcess(WorkerProcess process, std::string url);
  Status wait_ready(std::chrono::seconds patience, const std::atomic<bool>* stop);
  // Joins the drain thread and reaps the process; "" or why it ended ("exited with status 1; last stderr: ...").
  std::string shut_down();

  WorkerProcess process_;
  std::string url_;
  std::atomic<bool> draining_{true};
  std::atomic<bool> output_closed_{false};
  std::thread drain_;
};

}  // namespace infertune
