// `infertune sweep-worker` (internal, hidden from --help): the process the sweep runner starts for one reload
// group (group_execution.h). It reads one request line on stdin (worker_protocol.h), loads the model once,
// runs the trials in order and writes one event line per step on stdout. A std::bad_alloc in a trial leaves
// the heap suspect: the trial is reported as oom and the worker exits, so a fresh one takes the next trial.
// End of file on stdin (the runner stopping, or gone) stops it between trials or repetitions.
#include <fmt/format.h>
#include <poll.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <optional>
#include <string>
#include <thread>

#include "engine/model/model.h"
#include "sweeps/run/fault_injection.h"
#include "sweeps/run/llama_cpp_trial.h"
#include "sweeps/run/worker_exit.h"
#include "sweeps/run/worker_protocol.h"
#include "sweeps/store/metric_names.h"
#include "sweeps/sweeps_commands.h"
#include "sweeps/trial/trial_executor.h"

namespace infertune {

namespace {

constexpr size_t kMaxRequestBytes = size_t(256) << 20;

// Events go to a private copy of the original stdout; fd 1 then points at stderr, so that anything the engine
// prints on stdout lands in the runner's stderr tail instead of corrupting the event stream.
class EventWriter {
 public:
  EventWriter() : fd_(dup(STDOUT_FILENO)) {
    std::fflush(stdout);
    dup2(STDERR_FILENO, STDOUT_FILENO);
  }
  ~EventWriter() { close(fd_); }

  void write_event(const WorkerEvent& event) const {
    const std::string line = encode_event(event) + "\n";
    std::string_view rest = line;
    while (!rest.empty()) {
      const ssize_t n = write(fd_, rest.data(), rest.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;  // the runner is gone; the stop flag ends the work
      rest.remove_prefix(static_cast<size_t>(n));
    }
  }

 private:
  int fd_;
};

Result<std::string> read_request_line(int fd) {
  std::string text;
  char buffer[65536];
  for (;;) {
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail("cannot read the request on stdin: {}", std::strerror(errno));
    if (n == 0) return text.empty() ? Result<std::string>(fail("no request on stdin")) : Result<std::string>(text);
    const std::string_view chunk(buffer, static_cast<size_t>(n));
    const size_t nl = chunk.find('\n');
    text.append(chunk.substr(0, nl));
    if (nl != std::string_view::npos) return text;
    if (text.size() > kMaxRequestBytes) return fail("the request on stdin is over {} bytes", kMaxRequestBytes);
  }
}

// Sets `stop` when stdin reaches end of file: the runner closed it (stopping) or died.
class InputWatcher {
 public:
  InputWatcher()
      : thread_([this] {
          while (!done_.load()) {
            pollfd p{STDIN_FILENO, POLLIN, 0};
            if (poll(&p, 1, 100) <= 0) continue;
            char byte[256];
            const ssize_t n = read(STDIN_FILENO, byte, sizeof byte);
            if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
              stop_.store(true);
              return;
            }
          }
        }) {}
  ~InputWatcher() {
    done_.store(true);
    thread_.join();
  }
  const std::atomic<bool>& stop() const { return stop_; }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<bool> done_{false};
  std::thread thread_;
};

WorkerEvent trial_failed(const std::string& hash, TrialStatus status, std::string reason) {
  WorkerEvent e;
  e.kind = WorkerEventKind::trial_failed;
  e.hash = hash;
  e.status = status;
  e.reason = std::move(reason);
  return e;
}

struct TrialResult {
  WorkerEvent event;
  bool heap_suspect = false;  // a std::bad_alloc escaped: this process should not run another trial
};

std::string out_of_memory_reason() {
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    return fmt::format("out of memory (std::bad_alloc in the worker, address-space limit {} MiB)",
                       limit.rlim_cur >> 20);
  }
  return "out of memory (std::bad_alloc in the worker)";
}

// `model`: null when llama.cpp's tools run the trials (they load the file themselves). `gpu_weights` keeps
// the offloaded layers' upload for the group's next trial.
TrialResult run_one_trial(const Model* model, GpuWeightCache& gpu_weights, const WorkerTrial& trial,
                          const WorkerRequest& request, const FaultPlan& faults, const std::atomic<bool>& stop) {
  try {
    if (auto fault = faults.fault_for(trial.hash, trial.index)) {
      if (Status s = inject_fault(*fault); !s)
        return {trial_failed(trial.hash, TrialStatus::failed, s.error().message)};
    }
    auto measured =
        request.llama_cpp_bin.empty()
            ? run_trial(*model, trial.config, request.settings, request.environment, &stop, &gpu_weights)
            : run_llama_cpp_trial(request.llama_cpp_bin, request.model_path, trial.config, request.settings, &stop);
    if (!measured) {
      const auto& message = measured.error().message;
      return {trial_failed(trial.hash, names_out_of_memory(message) ? TrialStatus::oom : TrialStatus::failed, message)};
    }
    WorkerEvent done;
    done.kind = WorkerEventKind::trial_done;
    done.hash = trial.hash;
    done.measurement = std::move(*measured);
    return {std::move(done)};
  } catch (const std::bad_alloc&) {
    return {trial_failed(trial.hash, TrialStatus::oom, out_of_memory_reason()), true};
  } catch (const std::exception& e) {
    return {trial_failed(trial.hash, TrialStatus::failed, std::string("unexpected error: ") + e.what())};
  }
}

Result<Model> load_model(const WorkerRequest& request, double& load_ms) {
  ModelLoadOptions options;
  const auto& mmap = request.group_key.find("mmap");
  if (mmap != request.group_key.end() && mmap->is_boolean()) options.use_mmap = mmap->get<bool>();
  const auto& repack = request.group_key.find("repack");  // absent: the default (on)
  if (repack != request.group_key.end() && repack->is_boolean()) options.repack = repack->get<bool>();
  const auto start = std::chrono::steady_clock::now();
  auto model = Model::load(request.model_path, options);
  load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return model;
}

int run_worker() {
  const EventWriter events;
  auto fail_load = [&](std::string reason) {
    WorkerEvent e;
    e.kind = WorkerEventKind::load_failed;
    e.reason = std::move(reason);
    events.write_event(e);
    return 2;
  };
  auto line = read_request_line(STDIN_FILENO);
  if (!line) return fail_load(line.error().message);
  auto request = decode_request(*line);
  if (!request) return fail_load(request.error().message);
  auto faults = fault_plan_from_environment();
  if (!faults) return fail_load(faults.error().message);

  WorkerEvent loaded;
  loaded.kind = WorkerEventKind::loaded;
  std::optional<Model> model;
  if (request->llama_cpp_bin.empty()) {
    auto loaded_model = load_model(*request, loaded.load_ms);
    if (!loaded_model) return fail_load("cannot load the model: " + loaded_model.error().message);
    model.emplace(std::move(*loaded_model));
  }
  events.write_event(loaded);
  // Trials of a group share an -ngl (trial_plan.h): the first uploads the offloaded layers, the rest reuse them.
  GpuWeightCache gpu_weights;

  const InputWatcher input;
  for (const WorkerTrial& trial : request->trials) {
    if (input.stop().load()) return 0;
    WorkerEvent started;
    started.kind = WorkerEventKind::trial_started;
    started.hash = trial.hash;
    events.write_event(started);
    TrialResult result = run_one_trial(model ? &*model : nullptr, gpu_weights, trial, *request, *faults, input.stop());
    if (input.stop().load()) return 0;  // cut short: not a measurement of the configuration
    events.write_event(result.event);
    if (result.heap_suspect) {
      std::fflush(stderr);
      _exit(kWorkerOutOfMemoryExitCode);
    }
  }
  WorkerEvent group_done;
  group_done.kind = WorkerEventKind::group_done;
  events.write_event(group_done);
  return 0;
}

}  // namespace

void add_sweep_worker_command(Subcommands& commands) {
  CLI::App* sub = commands.add("sweep-worker",
                               "Internal, started by `infertune sweep`: runs one reload group's trials from a JSON "
                               "request on stdin, one JSON event per line on stdout",
                               [] { return run_worker(); });
  sub->group("");  // hidden from --help
}

}  // namespace infertune
