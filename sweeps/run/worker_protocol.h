#pragma once
// What the sweep runner and a sweep worker (`infertune sweep-worker`) say to each other.
//
// Parent -> worker: one request, a JSON document on one line of the worker's stdin (model path, group key,
// the trials to run in order, settings, environment). The parent keeps stdin open; closing it tells the
// worker to stop (the runner is stopping or gone).
//
// Worker -> parent: one JSON object per line on stdout, flushed as it happens, each with an "event" field:
//   {"event":"loaded","load_ms":12.5}
//   {"event":"load_failed","reason":"..."}
//   {"event":"trial_started","hash":"..."}
//   {"event":"trial_done","hash":"...","measurement":{"samples":[{"metric","repetition","value","is_warmup"}],
//                                                      "peak_rss_bytes","repetitions","ci_target_met","main_metric"}}
//   {"event":"trial_failed","hash":"...","status":"failed|oom","reason":"..."}
//   {"event":"group_done"}
// Decoding never throws: a line that is not such an event is an Error quoting the line.
#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/result.h"
#include "sweeps/store/store_records.h"
#include "sweeps/trial/trial_executor.h"

namespace infertune {

struct WorkerTrial {
  size_t index = 0;  // PlannedTrial::index (fault injection can name a trial by it)
  std::string hash;  // PlannedTrial::hash; events name the trial by it
  nlohmann::json config;
};

struct WorkerRequest {
  std::string model_path;
  nlohmann::json group_key;  // TrialGroup::key: its "mmap" says how the worker loads the model
  std::vector<WorkerTrial> trials;
  TrialSettings settings;
  TrialEnvironment environment;
  // Not empty: the trials run on llama.cpp's tools in this folder (llama_cpp_trial.h), not on this engine.
  std::string llama_cpp_bin;
};

// One line, no newline at the end (JSON escapes every newline inside strings).
std::string encode_request(const WorkerRequest& request);
Result<WorkerRequest> decode_request(std::string_view text);

enum class WorkerEventKind { loaded, load_failed, trial_started, trial_done, trial_failed, group_done };

struct WorkerEvent {
  WorkerEventKind kind = WorkerEventKind::group_done;
  double load_ms = 0;                        // loaded
  std::string reason;                        // load_failed, trial_failed
  std::string hash;                          // trial_started, trial_done, trial_failed
  TrialStatus status = TrialStatus::failed;  // trial_failed: failed or oom
  TrialMeasurement measurement;              // trial_done
};

std::string_view to_string(WorkerEventKind kind);

// One line, no newline at the end.
std::string encode_event(const WorkerEvent& event);
Result<WorkerEvent> decode_event(std::string_view line);

nlohmann::json measurement_to_json(const TrialMeasurement& measurement);
Result<TrialMeasurement> measurement_from_json(const nlohmann::json& j);

}  // namespace infertune
