#pragma once
// What a running sweep shows on stderr. On a terminal: one bar line redrawn in place with done/total, the
// failures, the trial running now (workload and the settings that vary in this sweep), the elapsed time and
// an ETA from the trial times measured so far. Otherwise (a log file, CI): one plain line per finished trial.
// The formatting and the ETA are pure functions, so they are tested without a sweep.
#include <nlohmann/json.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "sweeps/plan/trial_plan.h"
#include "sweeps/store/store_records.h"

namespace infertune {

// A trial as the time predictions see it: its workload ("pp512", "tg128"), its threads (0: unknown) and, for a
// workload that generates tokens, the weight bytes of its model (0: its time is not scaled: a prompt-only workload,
// or the size is unknown).
struct TrialCost {
  TrialCost(std::string workload_name, uint64_t weights = 0, int n_threads = 0)  // NOLINT: a name alone is a cost
      : workload(std::move(workload_name)), weight_bytes(weights), threads(n_threads) {}
  TrialCost(const char* workload_name) : TrialCost(std::string(workload_name)) {}  // NOLINT: as above
  std::string workload;
  uint64_t weight_bytes = 0;
  int threads = 0;
};

// Measured trial durations and the predictions for the trials to come (the ETA, the time budget). A trial's time is
// kept per run (its warmup and repetitions: capped repetitions make shorter trials). The prediction for a trial is
// the mean time per run of its workload's trials at its thread count, times the mean runs of its workload's trials
// (at most `max_runs` once repetitions are capped), times a size factor: where the workload generates tokens, half
// of a run's time is taken to scale with the model's weight bytes (each decode step streams them; dequantization
// and attention do not: a q8_0 model's runs took 1.2-1.34x a q4_k_m's for 1.64x the bytes). A thread count not
// measured yet for the workload takes its measured one times the ratio other workloads showed between the two
// counts. Before a trial of its workload has finished: the mean time of all trials. (Measured on the default
// sweep: within 15% of the time left from the first third of the trials on.)
class TrialTimes {
 public:
  // `runs`: warmup + repetitions the trial made (0: unknown, counted as one).
  void add(const TrialCost& trial, double seconds, int runs = 0);
  std::optional<double> predict(const TrialCost& trial, int max_runs = 0) const;  // nullopt: nothing measured yet
  // The sum of the predictions for the trials still to run; nullopt until one trial has been measured.
  std::optional<double> eta_s(const std::vector<TrialCost>& remaining, int max_runs = 0) const;
  size_t count() const { return count_; }

 private:
  struct Mean {
    double sum = 0;
    size_t count = 0;
    double value() const { return sum / static_cast<double>(count); }
  };
  struct WorkloadTimes {
    std::map<int, Mean> per_run_by_threads;  // seconds per run
    Mean runs, weight_bytes;
  };
  std::optional<double> per_run_at(const WorkloadTimes& w, int threads) const;
  std::map<std::string, WorkloadTimes> by_workload_;
  double total_s_ = 0;
  size_t count_ = 0;
};

// "42s", "3m05s", "1h02m".
std::string format_duration(double seconds);

// The config keys whose values differ between the plan's runnable trials (the workload aside), in a fixed
// order: what tells one trial of this sweep from another.
std::vector<std::string> varying_config_keys(const SweepPlan& plan);

// The settings among `keys` as bench's flags: "t 2 b 256 ctk q8_0" (the model as its file name).
std::string short_config(const nlohmann::json& config, const std::vector<std::string>& keys);

struct ProgressState {
  size_t done = 0;       // runnable trials finished, any status, this run or an earlier one
  size_t total = 0;      // runnable trials of the plan
  size_t failed = 0;     // of the done ones, not ok
  std::string current;   // the trial running now ("pp8 t 2"); empty between trials
  double elapsed_s = 0;  // this run
  std::optional<double> eta_s;
};

// The terminal line, at most `width` columns: "[#####-----] 3/6  1 failed  pp8 t 2  0:12 elapsed, ETA 8s".
std::string format_progress_bar(const ProgressState& state, size_t width);

struct FinishedTrialLine {
  size_t done = 0, total = 0;
  TrialStatus status = TrialStatus::ok;
  std::string workload;
  std::string config;           // short_config
  std::string metric;           // the main metric, empty when none was measured
  std::optional<double> value;  // its mean over the timed repetitions
  std::string reason;           // why it failed
  double duration_s = 0;
};

// The plain line: "[3/6] ok      pp8 t 2: pp_tps 1234.56 (0.8s)"; a failure gives its reason's first line.
std::string format_finished_line(const FinishedTrialLine& line);

// The mean of the non-warmup samples of `metric`; nullopt without any.
std::optional<double> mean_of_metric(const std::vector<Sample>& samples, const std::string& metric);

// Writes the above to a stream; safe to call from the signal watcher's thread too (note()). On a terminal
// a ticker thread redraws the bar every second between updates, the clocks moved on by the time passed.
class ProgressDisplay {
 public:
  ProgressDisplay(std::FILE* out, bool terminal);
  ~ProgressDisplay();
  ProgressDisplay(const ProgressDisplay&) = delete;
  ProgressDisplay& operator=(const ProgressDisplay&) = delete;

  void update(const ProgressState& state);             // terminal: redraw the bar; plain: nothing
  void trial_finished(const FinishedTrialLine& line);  // plain: print the line
  void note(const std::string& message);               // a line of its own, above the bar
  void finish();                                       // leave the terminal on a fresh line; stop the ticker

 private:
  using Clock = std::chrono::steady_clock;
  void draw_locked();
  void clear_bar_locked();
  void tick();

  std::FILE* out_;
  bool terminal_;
  bool bar_shown_ = false;
  bool finished_ = false;
  std::optional<ProgressState> state_;
  Clock::time_point state_at_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::thread ticker_;
};

// The terminal's width in columns (80 when it cannot be told).
size_t terminal_columns(std::FILE* stream);

}  // namespace infertune
