#include "sweeps/run/group_execution.h"

#include <fmt/format.h>

#include <chrono>

#include "sweeps/run/worker_exit.h"
#include "sweeps/run/worker_process.h"
#include "sweeps/run/worker_protocol.h"
#include "sweeps/store/metric_names.h"
#include "sweeps/store/time_text.h"

namespace infertune {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// How long a worker gets to exit by itself before its group is killed: after group_done (it frees the
// model), after stdout closed (it is dying already), and when told to stop (it checks between repetitions).
constexpr milliseconds kExitGrace{5000};
constexpr milliseconds kDyingGrace{2000};
constexpr milliseconds kStopGrace{2000};

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

Clock::time_point after_seconds(double s) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

// The trial a worker has started and not yet reported.
struct InFlight {
  Clock::time_point started;
  std::string started_at;
};

// What ended a worker's session without a proper goodbye.
enum class Breakdown { stdout_closed, deadline, protocol };

class GroupRun {
 public:
  GroupRun(const GroupLaunch& launch, const GroupCallbacks& callbacks) : launch_(launch), callbacks_(callbacks) {}

  Status run() {
    bool any_started = false;
    while (next_ < launch_.trials.size() && !stopped_) {
      auto worker = WorkerProcess::start(worker_command());
      if (!worker) {
        if (!any_started) return worker.error();
        fail_remaining(TrialStatus::failed, fmt::format("cannot start a new worker: {}", worker.error().message));
        break;
      }
      any_started = true;
      if (callbacks_.worker_started) callbacks_.worker_started(worker->pid());
      run_worker(*worker);
    }
    return Status::success();
  }

 private:
  WorkerCommand worker_command() const {
    WorkerCommand c;
    c.executable = launch_.executable.empty() ? "/proc/self/exe" : launch_.executable;
    c.arguments = {"sweep-worker"};
    c.extra_environment = launch_.worker_environment;
    c.memory_limit_bytes = launch_.memory_limit_bytes;
    return c;
  }

  WorkerRequest request() const {
    WorkerRequest r;
    r.model_path = launch_.model_path;
    r.group_key = launch_.group_key;
    for (size_t i = next_; i < launch_.trials.size(); ++i) {
      const PlannedTrial& t = *launch_.trials[i];
      r.trials.push_back(WorkerTrial{t.index, t.hash, t.config});
    }
    r.settings = launch_.settings;
    r.environment = launch_.environment;
    r.llama_cpp_bin = launch_.llama_cpp_bin;
    return r;
  }

  // One worker, from its start to its end: runs until the group is done, the caller stops, or the worker breaks
  // down (the trial it was running is then failed, and run() starts a fresh worker for the rest).
  void run_worker(WorkerProcess& worker) {
    session_ = Session{};
    Clock::time_point deadline = after_seconds(launch_.trial_timeout_s);
    // A worker that died before reading its request is seen below, as the end of its stdout; one that does
    // not read it at all, as the load's deadline passing.
    (void)worker.write_input(encode_request(request()) + "\n", deadline);
    for (;;) {
      const WorkerProcess::Line line = worker.next_line(deadline);
      if (line.state == WorkerProcess::LineState::closed) return break_down(worker, Breakdown::stdout_closed, "");
      if (line.state == WorkerProcess::LineState::deadline) return break_down(worker, Breakdown::deadline, "");
      if (line.state == WorkerProcess::LineState::too_long) {
        return break_down(worker, Breakdown::protocol, "an output line is too long");
      }
      auto event = decode_event(line.text);
      if (!event) return break_down(worker, Breakdown::protocol, event.error().message);
      auto next = handle(worker, *event);
      if (!next) return break_down(worker, Breakdown::protocol, next.error().message);
      if (!*next) return;  // the session is over
      deadline = after_seconds(session_.in_flight ? launch_.trial_timeout_s + launch_.settings.cooldown_s
                                                  : launch_.trial_timeout_s);
    }
  }

  // true: keep reading this worker; false: it is finished with (group done, load failed, stopped, oom exit).
  Result<bool> handle(WorkerProcess& worker, const WorkerEvent& e) {
    switch (e.kind) {
      case WorkerEventKind::loaded:
        if (session_.loaded) return fail("a second 'loaded' event");
        session_.loaded = true;
        session_.load_ms = e.load_ms;
        return true;
      case WorkerEventKind::load_failed:
        if (session_.loaded) return fail("'load_failed' after 'loaded'");
        worker.finish(kDyingGrace);
        fail_remaining(names_out_of_memory(e.reason) ? TrialStatus::oom : TrialStatus::failed, e.reason);
        return false;
      case WorkerEventKind::trial_started:
        if (Status s = expect_trial(e, /*started=*/false); !s) return s.error();
        session_.in_flight = InFlight{Clock::now(), utc_now_text()};
        if (callbacks_.started) callbacks_.started(*launch_.trials[next_]);
        return true;
      case WorkerEventKind::trial_done:
      case WorkerEventKind::trial_failed:
        return finish_trial(worker, e);
      case WorkerEventKind::group_done:
        if (session_.in_flight || next_ != launch_.trials.size()) return fail("'group_done' with trials left");
        worker.close_input();
        worker.finish(kExitGrace);
        return false;
    }
    return fail("unknown event");
  }

  Status expect_trial(const WorkerEvent& e, bool started) const {
    if (!session_.loaded) return fail("'{}' before 'loaded'", to_string(e.kind));
    if (next_ >= launch_.trials.size()) return fail("'{}' of trial {} after the last trial", to_string(e.kind), e.hash);
    if (session_.in_flight.has_value() != started) {
      return fail("'{}' of trial {} {}", to_string(e.kind), e.hash,
                  started ? "that was not started" : "while another trial runs");
    }
    if (e.hash != launch_.trials[next_]->hash) {
      return fail("'{}' names trial {}, expected {}", to_string(e.kind), e.hash, launch_.trials[next_]->hash);
    }
    return Status::success();
  }

  Result<bool> finish_trial(WorkerProcess& worker, const WorkerEvent& e) {
    if (Status s = expect_trial(e, /*started=*/true); !s) return s.error();
    TrialOutcome o = outcome_started(*session_.in_flight);
    if (e.kind == WorkerEventKind::trial_done) {
      o.measurement = e.measurement;
      // llama.cpp's tools load the model themselves, inside their runs: no load time of ours to record.
      if (launch_.llama_cpp_bin.empty()) {
        o.measurement.samples.push_back(Sample{metric::kModelLoadMs, 0, session_.load_ms, false});
      }
    } else {
      o.status = e.status;
      o.reason = e.reason;
    }
    session_.in_flight.reset();
    ++session_.reported;
    if (!report(std::move(o))) {
      stop(worker);
      return false;
    }
    // A worker whose trial hit std::bad_alloc exits next (kWorkerOutOfMemoryExitCode): break_down sees it end
    // between trials after progress, and run() replaces it without blaming another trial.
    return true;
  }

  // The worker crashed, hung, or wrote what the protocol does not allow: it is killed (unless it is dying
  // already) and what it was doing fails with the reason.
  void break_down(WorkerProcess& worker, Breakdown how, const std::string& detail) {
    if (how != Breakdown::stdout_closed) worker.kill_group();
    const WorkerExit exit = worker.finish(kDyingGrace);
    const double timeout_s =
        how != Breakdown::deadline
            ? 0
            : (session_.in_flight ? launch_.trial_timeout_s + launch_.settings.cooldown_s : launch_.trial_timeout_s);
    WorkerFailure failure = classify_worker_end(exit, timeout_s, worker.stderr_tail());
    if (how == Breakdown::protocol) {
      failure = {TrialStatus::failed,
                 fmt::format("worker protocol error: {}{}", detail, stderr_suffix(worker.stderr_tail()))};
    }
    if (!session_.loaded) {
      // The next worker would load the same model the same way: the whole group fails, once.
      fail_remaining(failure.status, "loading the model: " + failure.reason);
    } else if (session_.in_flight) {
      TrialOutcome o = outcome_started(*session_.in_flight);
      o.status = failure.status;
      o.reason = std::move(failure.reason);
      o.outside_signal = exit.signaled && !exit.killed_by_us ? exit.signal : 0;
      report(std::move(o));
    } else if (session_.reported == 0) {
      // Dead between trials before doing anything: blame the trial it was about to start, so the group
      // always progresses.
      TrialOutcome o = outcome_not_started();
      o.status = failure.status;
      o.reason = "before the trial started: " + failure.reason;
      o.outside_signal = exit.signaled && !exit.killed_by_us ? exit.signal : 0;
      report(std::move(o));
    }
  }

  void stop(WorkerProcess& worker) {
    worker.close_input();
    worker.finish(kStopGrace);
  }

  TrialOutcome outcome_started(const InFlight& f) const {
    TrialOutcome o;
    o.trial = launch_.trials[next_];
    o.started_at = f.started_at;
    o.finished_at = utc_now_text();
    o.duration_s = seconds_since(f.started);
    return o;
  }

  TrialOutcome outcome_not_started() const {
    TrialOutcome o;
    o.trial = launch_.trials[next_];
    o.started_at = o.finished_at = utc_now_text();
    return o;
  }

  void fail_remaining(TrialStatus status, const std::string& reason) {
    while (next_ < launch_.trials.size() && !stopped_) {
      TrialOutcome o = outcome_not_started();
      o.status = status;
      o.reason = reason;
      report(std::move(o));
    }
  }

  // Hands the outcome to the caller and moves on to the next trial; false when the caller stops the group.
  bool report(TrialOutcome outcome) {
    ++next_;
    if (callbacks_.finished && !callbacks_.finished(outcome)) stopped_ = true;
    return !stopped_;
  }

  struct Session {
    bool loaded = false;
    double load_ms = 0;
    std::optional<InFlight> in_flight;
    size_t reported = 0;  // trials this worker finished
  };

  const GroupLaunch& launch_;
  const GroupCallbacks& callbacks_;
  size_t next_ = 0;  // into launch_.trials: the first trial not reported
  bool stopped_ = false;
  Session session_;
};

}  // namespace

Status run_group(const GroupLaunch& launch, const GroupCallbacks& callbacks) {
  return GroupRun(launch, callbacks).run();
}

}  // namespace infertune
