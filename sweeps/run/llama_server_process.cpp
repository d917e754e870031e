#include "sweeps/run/llama_server_process.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "sweeps/metrics/peak_rss.h"
#include "sweeps/run/worker_exit.h"

namespace infertune {
namespace {

using namespace std::chrono_literals;

// A loopback port nobody listens on now (the kernel's pick for port 0). Another process could take it before the
// server binds it; the server then exits with its bind error, which the caller reports.
Result<int> free_loopback_port() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail("cannot open a socket to find a free port: {}", std::strerror(errno));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  const bool found = bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
                     getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
  const int error = errno;
  close(fd);
  if (!found) return fail("cannot find a free loopback port: {}", std::strerror(error));
  return int(ntohs(address.sin_port));
}

bool health_ok(httplib::Client& client) {
  const auto res = client.Get("/health");
  return res && res->status == 200;
}

}  // namespace

Result<std::unique_ptr<LlamaServerProcess>> LlamaServerProcess::start(const std::vector<std::string>& argv,
                                                                      std::chrono::seconds patience,
                                                                      const std::atomic<bool>* stop) {
  auto port = free_loopback_port();
  if (!port) return port.error();
  WorkerCommand command;
  command.executable = argv.front();
  command.arguments.assign(argv.begin() + 1, argv.end());
  command.arguments.insert(command.arguments.end(), {"--host", "127.0.0.1", "--port", std::to_string(*port)});
  auto process = WorkerProcess::start(command);
  if (!process) return process.error();
  process->close_input();
  std::unique_ptr<LlamaServerProcess> server(
      new LlamaServerProcess(std::move(*process), fmt::format("http://127.0.0.1:{}", *port)));
  if (Status ready = server->wait_ready(patience, stop); !ready) {
    const std::string ended = server->shut_down();
    return fail("llama-server did not become ready: {}{}", ready.error().message, ended);
  }
  return server;
}

LlamaServerProcess::LlamaServerProcess(WorkerProcess process, std::string url)
    : process_(std::move(process)), url_(std::move(url)) {
  drain_ = std::thread([this] {
    while (draining_.load()) {
      const auto line = process_.next_line(WorkerProcess::Clock::now() + 100ms);
      if (line.state == WorkerProcess::LineState::closed || line.state == WorkerProcess::LineState::too_long) {
        output_closed_.store(true);  // exiting (its stderr is collected at the reap)
        return;
      }
    }
  });
}

LlamaServerProcess::~LlamaServerProcess() { shut_down(); }

Status LlamaServerProcess::wait_ready(std::chrono::seconds patience, const std::atomic<bool>* stop) {
  httplib::Client client(url_);
  client.set_connection_timeout(1s);
  client.set_read_timeout(5s);
  const auto deadline = std::chrono::steady_clock::now() + patience;
  while (!health_ok(client)) {
    if (output_closed_.load()) return fail("it exited");
    if (stop && stop->load()) return fail("the sweep is stopping");
    if (std::chrono::steady_clock::now() >= deadline) {
      return fail("/health did not answer 200 within {} s", patience.count());
    }
    std::this_thread::sleep_for(100ms);
  }
  return {};
}

std::string LlamaServerProcess::shut_down() {
  draining_.store(false);
  if (drain_.joinable()) drain_.join();
  // A server that closed its output is exiting by itself: give it a moment, to report how it ended. One still
  // running is killed with its group at once.
  const bool exited_itself = output_closed_.load();
  const WorkerExit exit = process_.finish(exited_itself ? 2000ms : 0ms);
  if (!exited_itself) return "";
  return fmt::format(" (llama-server {}{})", exit.describe(), stderr_suffix(process_.stderr_tail(), 8));
}

std::string LlamaServerProcess::exit_reason() { return output_closed_.load() ? shut_down() : ""; }

std::optional<int64_t> LlamaServerProcess::peak_rss_bytes() const { return peak_rss_bytes_of(process_.pid()); }

}  // namespace infertune
