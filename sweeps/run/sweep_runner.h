#pragma once
// The sweep runner: runs a planned sweep into the results store, the store's one writer.
//
// It records the trials the plan skipped (status skipped, with the reason and the memory prediction), then
// group by group produces the model file (a quantization variant when the group has one; its quality against the
// base is measured once per variant and recorded in variant_quality, sweeps/quality) and has
// run_group (group_execution.h) run the trials not yet recorded, recording each as it finishes in its own
// transaction. Workers never touch the store: a worker left behind by a killed runner cannot write to it,
// and because a trial is committed whole or not at all and the runner skips every config hash the store
// already holds, a `kill -9` at any moment loses no committed trial and a resume duplicates none.
//
// It stops starting trials on Ctrl-C / SIGTERM (sweep_interrupt.h) and when the next trial is predicted,
// from the trial times measured so far, to end after the spec's time budget (counted from this run's start, plus
// what the command spent before it; every run starts at least one trial, so repeated resumes always progress). The
// sweep is then left interrupted, for --resume. Before that, it paces: at each group's start, when the trials left
// are predicted not to fit the time left at the sweep's repetitions, the rest of the sweep stops at --min-reps
// (the repetitions are cut before any configuration is).
#include <filesystem>
#include <optional>
#include <string>

#include "kernels/result.h"
#include "sweeps/plan/trial_plan.h"
#include "sweeps/quality/variant_quality.h"
#include "sweeps/spec/sweep_spec.h"
#include "sweeps/store/results_store.h"
#include "sweeps/trial/trial_executor.h"

namespace infertune {

struct SweepRunOptions {
  TrialSettings settings;
  double trial_timeout_s = 600;    // --trial-timeout
  std::string variant_cache_dir;   // --cache-dir: where quantization variants are written (empty: the default)
  bool measure_quality = true;     // --no-quality: false (variants of a real base are not scored)
  QualityMethod quality;           // the text and chunks a variant is scored on, against its base
  std::string executable;          // the worker binary; empty: this process's own
  bool progress_terminal = false;  // stderr is a terminal: the bar, else plain lines
  std::optional<double> host_read_bandwidth_gbs;  // the probe's, for the workers' bandwidth %
  double time_spent_before_s = 0;                 // of the time budget, by the command before the run (synthesis)
};

struct SweepRunResult {
  SweepStatus status = SweepStatus::running;
  std::string stop_reason;  // why the sweep is interrupted or failed; empty when done
  size_t ran = 0;           // trials run by this call
  bool stopped_by_time_budget = false;
  std::string repetitions_cut;  // how the time budget cut the repetitions ("" when it did not)
};

// Runs what `sweep_id` (created or resumed by the caller, status running) still lacks of `plan`.
// Errors only for what stops the sweep itself (the store failing, no worker able to start); the sweep is
// then marked failed. A trial's failure is a recorded trial, not an error.
Result<SweepRunResult> run_sweep(ResultsStore& store, int64_t sweep_id, const SweepSpec& spec, const SweepPlan& plan,
                                 const SweepRunOptions& options);

// The counts of a sweep's recorded trials, for the closing summary.
struct SweepCounts {
  size_t ok = 0, failed = 0, skipped = 0;  // failed: failed, timeout and oom
  size_t recorded() const { return ok + failed + skipped; }
};
Result<SweepCounts> count_sweep_trials(ResultsStore& store, int64_t sweep_id);

}  // namespace infertune
