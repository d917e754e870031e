#pragma once
// Runs the trials of one reload group (trial_plan.h) in worker processes: a worker (`infertune sweep-worker`,
// its own process group, so a terminal's Ctrl-C reaches only the runner) loads the group's model once and
// runs the trials one after another, streaming each result back as it finishes. A worker that crashes, hangs
// past the trial timeout, or runs out of memory costs the trial it was running: that trial comes back with
// status failed / timeout / oom and the reason (signal, exit status, the last lines of its stderr), and a new
// worker carries on with the rest. A model that fails to load fails every trial of the group with that reason.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kernels/result.h"
#include "sweeps/plan/trial_plan.h"
#include "sweeps/store/store_records.h"
#include "sweeps/trial/trial_executor.h"

namespace infertune {

struct GroupLaunch {
  std::string executable;                   // the infertune binary; empty: this process's own (/proc/self/exe)
  std::string model_path;                   // the file the worker loads (a quantization variant already produced)
  nlohmann::json group_key;                 // TrialGroup::key
  std::vector<const PlannedTrial*> trials;  // the ones still to run, in run order
  TrialSettings settings;
  TrialEnvironment environment;
  double trial_timeout_s = 600;  // per trial, from its start event (the model load has the same allowance)
  std::optional<uint64_t> memory_limit_bytes;   // the worker's address-space limit (RLIMIT_AS), if any
  std::vector<std::string> worker_environment;  // NAME=VALUE added to the workers' environment (tests:
                                                // INFERTUNE_SWEEP_FAULT, fault_injection.h)
  std::string llama_cpp_bin;  // not empty: the workers run the trials on llama.cpp's tools in this folder
};

struct TrialOutcome {
  const PlannedTrial* trial = nullptr;
  TrialStatus status = TrialStatus::ok;  // ok, failed, timeout or oom
  std::string reason;                    // empty when ok
  TrialMeasurement measurement;          // what was measured (empty when not ok); includes load_ms samples
  std::string started_at;                // time_text.h
  std::string finished_at;
  double duration_s = 0;
  int outside_signal = 0;  // the signal that killed the worker when the runner did not send it (0: none)
};

struct GroupCallbacks {
  std::function<void(const PlannedTrial&)> started;  // a worker began the trial (optional)
  // Called in the caller's thread for every trial, in the order they finish. Returning false stops the
  // group after this trial (Ctrl-C, the sweep's time budget): the worker is told to exit and run_group
  // returns; the trials not run are not reported.
  std::function<bool(const TrialOutcome&)> finished;
  std::function<void(int pid)> worker_started;  // a worker process was started (optional; tests count them)
};

// Errors only when no worker can be started at all (the executable is missing, fork fails); everything a
// trial or a worker does wrong is a TrialOutcome.
Status run_group(const GroupLaunch& launch, const GroupCallbacks& callbacks);

}  // namespace infertune
