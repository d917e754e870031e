#include "sweeps/run/sweep_runner.h"

#include <fmt/format.h>

#include <chrono>
#include <csignal>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "sweeps/run/group_execution.h"
#include "sweeps/run/sweep_interrupt.h"
#include "sweeps/run/sweep_progress.h"
#include "sweeps/run/sweep_records.h"
#include "sweeps/run/sweep_variants.h"
#include "sweeps/store/time_text.h"

namespace infertune {

namespace {

using Clock = std::chrono::steady_clock;

class Runner {
 public:
  Runner(ResultsStore& store, int64_t sweep_id, const SweepSpec& spec, const SweepPlan& plan,
         const SweepRunOptions& options)
      : store_(store),
        sweep_id_(sweep_id),
        spec_(spec),
        plan_(plan),
        options_(options),
        keys_(varying_config_keys(plan)),
        display_(stderr, options.progress_terminal),
        start_(Clock::now()) {}

  Result<SweepRunResult> run();

 private:
  Result<SweepRunResult> finish();
  Error fail_sweep(const Error& error);
  Status load_done();
  Status record_skipped();
  Status run_group_trials(const TrialGroup& group);
  Status record_unrunnable(const std::vector<const PlannedTrial*>& trials, const std::string& reason);
  Status record(const TrialRecord& record, const PlannedTrial& trial);
  Result<std::optional<int64_t>> model_id_of(const std::string& path);
  Status record_quality(const std::string& base, const std::string& quant, const ModelVariant& variant,
                        int64_t model_id);
  VariantQualityRecord measure_quality(const std::string& base, const std::string& quant, const ModelVariant& variant);
  bool on_finished(const TrialOutcome& outcome);
  bool may_start(const PlannedTrial& next);
  const PlannedTrial* next_pending() const;
  static bool stopped_from_outside(const TrialOutcome& o);
  void on_signal(int count);
  void show(const std::string& current = {});
  double elapsed_s() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  // What the time budget has used: this run and what the command spent before it.
  double budget_used_s() const { return elapsed_s() + options_.time_spent_before_s; }
  std::vector<TrialCost> remaining_costs() const;
  void pace_repetitions();
  int runs_cap(const PlannedTrial& t) const;
  std::optional<double> eta_s() const;

  ResultsStore& store_;
  int64_t sweep_id_;
  const SweepSpec& spec_;
  const SweepPlan& plan_;
  const SweepRunOptions& options_;
  std::vector<std::string> keys_;  // the settings that tell this sweep's trials apart
  ProgressDisplay display_;
  Clock::time_point start_;
  std::unique_ptr<InterruptWatch> watch_;

  std::set<std::string> done_;  // config hashes the store holds for this sweep
  size_t failed_ = 0;           // of the runnable trials done, those not ok
  TrialTimes times_;
  size_t ran_ = 0;                                           // trials recorded by this run (skipped ones aside)
  std::map<std::string, std::optional<int64_t>> model_ids_;  // by file path
  std::set<int64_t> quality_recorded_;                       // variants (model ids) with a variant_quality row
  bool synthetic_noted_ = false;                             // the "quality not meaningful" line was shown
  std::optional<int64_t> group_model_id_;                    // the model of the group running now
  std::vector<const PlannedTrial*> pending_;                 // the group's trials handed to run_group
  std::string stop_reason_;
  bool stopped_by_time_budget_ = false;
  std::string repetitions_cut_;        // set when pace_repetitions capped them
  size_t running_group_ = SIZE_MAX;    // the group whose worker runs now
  bool running_group_capped_ = false;  // launched after the cap
  std::optional<Error> store_error_;   // from a record made in run_group's callback
};

// A trial as the predictions see it: its workload, its threads and, where it generates tokens, its model's weight
// bytes.
TrialCost cost_of(const PlannedTrial& t) {
  const auto workload = t.config.find("workload");
  const bool generates = workload != t.config.end() && workload->is_object() && workload->value("n_gen", 0) > 0;
  return {t.workload, generates && t.memory ? t.memory->weights : 0, int(t.config.value("threads", 0))};
}

Result<SweepRunResult> Runner::run() {
  auto watch = InterruptWatch::install([this](int count) { on_signal(count); });
  if (!watch) return fail_sweep(watch.error());
  watch_ = std::move(*watch);
  if (Status s = load_done(); !s) return fail_sweep(s.error());
  if (Status s = record_skipped(); !s) return fail_sweep(s.error());
  show();
  for (const TrialGroup& group : plan_.groups) {
    if (!stop_reason_.empty()) break;
    if (Status s = run_group_trials(group); !s) return fail_sweep(s.error());
  }
  return finish();
}

Result<SweepRunResult> Runner::finish() {
  display_.finish();
  SweepRunResult result{.status = SweepStatus::done,
                        .stop_reason = stop_reason_,
                        .ran = ran_,
                        .stopped_by_time_budget = stopped_by_time_budget_,
                        .repetitions_cut = repetitions_cut_};
  const size_t missing = static_cast<size_t>(
      std::ranges::count_if(plan_.trials, [&](const PlannedTrial& t) { return !done_.contains(t.hash); }));
  if (missing > 0) {
    result.status = SweepStatus::interrupted;
    // A group whose worker stopped reporting without a stop of ours; the trials wait for --resume.
    if (result.stop_reason.empty()) result.stop_reason = fmt::format("{} trials were not run", missing);
  }
  if (Status s = store_.set_sweep_status(sweep_id_, result.status); !s) return s.error();
  return result;
}

Error Runner::fail_sweep(const Error& error) {
  display_.finish();
  (void)store_.set_sweep_status(sweep_id_, SweepStatus::failed);  // best effort: the store may be what failed
  return error;
}

Status Runner::load_done() {
  auto done = store_.done_config_hashes(sweep_id_);
  if (!done) return done.error();
  done_ = std::move(*done);
  auto quality = store_.variant_quality(sweep_id_);
  if (!quality) return quality.error();
  for (const VariantQualityRecord& q : *quality) quality_recorded_.insert(q.model_id);  // a resume keeps them
  auto stored = store_.trials(sweep_id_);
  if (!stored) return stored.error();
  std::map<std::string, const PlannedTrial*> by_hash;
  for (const PlannedTrial& t : plan_.trials) by_hash[t.hash] = &t;
  // Earlier runs' trials count as done and their times feed the ETA and the time budget.
  for (const StoredTrial& s : *stored) {
    auto it = by_hash.find(s.trial.config_hash);
    if (it == by_hash.end() || it->second->skipped()) continue;
    if (s.trial.status != TrialStatus::ok) ++failed_;
    if (s.trial.duration_s) times_.add(cost_of(*it->second), *s.trial.duration_s);
  }
  return {};
}

Result<std::optional<int64_t>> Runner::model_id_of(const std::string& path) {
  if (auto it = model_ids_.find(path); it != model_ids_.end()) return it->second;
  std::optional<int64_t> id;
  auto model = model_record(path);
  if (model) {
    auto upserted = store_.upsert_model(*model);
    if (!upserted) return upserted.error();
    id = *upserted;
  } else {
    display_.note(fmt::format("warning: {}; its trials are recorded without a model row", model.error().message));
  }
  model_ids_[path] = id;
  return id;
}

// Once per variant and sweep: the variant's quality against the base, or why there is none.
Status Runner::record_quality(const std::string& base, const std::string& quant, const ModelVariant& variant,
                              int64_t model_id) {
  if (quality_recorded_.contains(model_id)) return {};
  if (variant.source == VariantSource::quantized && !options_.measure_quality) return {};
  VariantQualityRecord record;
  if (variant.source == VariantSource::synthesized) {
    record.status = QualityStatus::not_meaningful;
    record.reason = fmt::format(
        "the base model {} is synthetic (written by infertune synth: random weights), so its variants are "
        "synthesized too and their perplexity and KL divergence would not be meaningful",
        base);
    if (!synthetic_noted_) display_.note("quality: not measured: " + record.reason);
    synthetic_noted_ = true;
  } else {
    record = measure_quality(base, quant, variant);
  }
  record.sweep_id = sweep_id_;
  record.model_id = model_id;
  record.quant = quant;
  auto base_id = model_id_of(base);
  if (!base_id) return base_id.error();
  record.base_model_id = *base_id;
  if (Status s = store_.record_variant_quality(record); !s) return s;
  quality_recorded_.insert(model_id);
  return {};
}

VariantQualityRecord Runner::measure_quality(const std::string& base, const std::string& quant,
                                             const ModelVariant& variant) {
  VariantQualityRecord record;
  const auto failed = [&](const std::string& why) {
    record.status = QualityStatus::failed;
    record.reason = why;
    display_.note(fmt::format("warning: the quality of the {} variant was not measured: {}", quant, why));
    return record;
  };
  auto method = quality_method_for(base, options_.quality);
  if (!method) return failed(method.error().message);
  display_.note(fmt::format("quality: scoring the {} variant against {} on {} ({} chunks of {} tokens)", quant, base,
                            method->corpus, method->n_chunks, method->n_ctx));
  const auto log = [this](const std::string& line) { display_.note("quality: " + line); };
  auto measured = measure_variant_quality(base, variant.base_content_hash, variant.path, *method,
                                          variant_cache_dir(options_.variant_cache_dir), log);
  if (!measured) return failed(measured.error().message);
  const QualityFigures& f = measured->figures;
  record.status = QualityStatus::measured;
  record.corpus = f.corpus;
  record.n_ctx = f.n_ctx;
  record.n_chunks = f.n_chunks;
  record.positions = static_cast<int64_t>(f.positions);
  record.ppl = f.ppl;
  record.ppl_error = f.ppl_error;
  record.base_ppl = f.base_ppl;
  record.kld_mean = f.kld_mean;
  record.kld_error = f.kld_error;
  record.kld_p99 = f.kld_p99;
  record.kld_max = f.kld_max;
  record.same_top = f.same_top;
  display_.note(fmt::format(
      "quality: {}: PPL {:.4f} (base {:.4f}, {:+.2f}%), mean KLD {:.5f}, same top token {:.1f}%{}", quant, f.ppl,
      f.base_ppl, f.ppl_increase_pct(), f.kld_mean, f.same_top * 100, measured->from_cache ? " (cached)" : ""));
  return record;
}

Status Runner::record(const TrialRecord& r, const PlannedTrial& trial) {
  // The store refuses a second record of a hash too; this keeps a runner bug from ever getting that far.
  if (done_.contains(trial.hash)) return {};
  auto id = store_.record_trial(r);
  if (!id) return fail("recording trial {} ({}): {}", trial.index, trial.workload, id.error().message);
  done_.insert(trial.hash);
  return {};
}

Status Runner::record_skipped() {
  for (const TrialGroup& group : plan_.groups) {
    std::optional<int64_t> model_id;
    const std::string quant = group.key.value("quant", "");
    bool any = false;
    for (size_t i : group.trials) any = any || (plan_.trials[i].skipped() && !done_.contains(plan_.trials[i].hash));
    if (!any) continue;
    // A variant that will not be produced has no model row; the config names its base model and type.
    if (quant.empty()) {
      auto id = model_id_of(group.key.value("model", ""));
      if (!id) return id.error();
      model_id = *id;
    }
    for (size_t i : group.trials) {
      const PlannedTrial& t = plan_.trials[i];
      if (!t.skipped() || done_.contains(t.hash)) continue;
      if (Status s = record(skipped_trial_record(sweep_id_, t, model_id), t); !s) return s;
    }
  }
  return {};
}

Status Runner::record_unrunnable(const std::vector<const PlannedTrial*>& trials, const std::string& reason) {
  for (const PlannedTrial* t : trials) {
    TrialOutcome outcome;
    outcome.trial = t;
    outcome.status = TrialStatus::failed;
    outcome.reason = reason;
    outcome.started_at = outcome.finished_at = utc_now_text();
    if (!on_finished(outcome)) break;
  }
  if (store_error_) return *store_error_;
  return {};
}

const PlannedTrial* Runner::next_pending() const {
  for (const PlannedTrial* t : pending_) {
    if (!done_.contains(t->hash)) return t;
  }
  return nullptr;
}

Status Runner::run_group_trials(const TrialGroup& group) {
  pending_.clear();
  for (size_t i : group.trials) {
    const PlannedTrial& t = plan_.trials[i];
    if (!t.skipped() && !done_.contains(t.hash)) pending_.push_back(&t);
  }
  if (pending_.empty() || !may_start(*pending_.front())) return {};
  const std::string base = group.key.value("model", "");
  const std::string quant = group.key.value("quant", "");
  std::string model_path = base;
  if (!quant.empty()) {
    display_.note(fmt::format("model: the {} variant of {} (written to the cache on first use)", quant, base));
    auto variant = produce_model_variant(base, quant, options_.variant_cache_dir);
    if (!variant) {
      group_model_id_.reset();  // no file, no model row
      return record_unrunnable(pending_, variant.error().message);
    }
    model_path = variant->path;
    if (variant->requantized && model_ids_.find(model_path) == model_ids_.end()) {
      display_.note(
          fmt::format("warning: the base {} is quantized already: its {} variant is requantized (worse than "
                      "quantizing from F32, F16 or BF16) and its quality is measured against that base",
                      base, quant));
    }
    auto model_id = model_id_of(model_path);
    if (!model_id) return model_id.error();
    if (*model_id) {
      if (Status s = record_quality(base, quant, *variant, **model_id); !s) return s;
    }
    if (!may_start(*pending_.front())) return {};  // a Ctrl-C while the variant was written or scored
  }
  auto model_id = model_id_of(model_path);
  if (!model_id) return model_id.error();
  group_model_id_ = *model_id;

  GroupLaunch launch;
  launch.executable = options_.executable;
  launch.model_path = model_path;
  launch.group_key = group.key;
  launch.trials = pending_;
  pace_repetitions();
  launch.settings = options_.settings;
  running_group_ = pending_.front()->group;
  running_group_capped_ = !repetitions_cut_.empty();
  if (running_group_capped_) launch.settings.max_reps = options_.settings.min_reps;
  launch.environment.host_read_bandwidth_gbs = options_.host_read_bandwidth_gbs;
  launch.trial_timeout_s = options_.trial_timeout_s;
  if (spec_.engine == SweepEngine::llama_cpp) launch.llama_cpp_bin = spec_.llama_cpp_bin;
  GroupCallbacks callbacks;
  callbacks.started = [this](const PlannedTrial& t) {
    show(fmt::format("{} {}", t.workload, short_config(t.config, keys_)));
  };
  callbacks.finished = [this](const TrialOutcome& o) { return on_finished(o); };
  const Status status = run_group(launch, callbacks);
  if (store_error_) return *store_error_;
  if (!status) return status;
  return {};
}

bool Runner::stopped_from_outside(const TrialOutcome& o) {
  return o.status != TrialStatus::ok &&
         (o.outside_signal == SIGTERM || o.outside_signal == SIGINT || o.outside_signal == SIGHUP);
}

bool Runner::on_finished(const TrialOutcome& o) {
  const PlannedTrial& trial = *o.trial;
  // After a second Ctrl-C the worker was killed by us: its trial is not a result, it stays for --resume.
  if (watch_->abort_requested() && o.status != TrialStatus::ok) {
    stop_reason_ = fmt::format("stopped at once by a second {}", watch_->signal_name());
    return false;
  }
  // Nor is a worker stopped from outside: a batch system's requeue or preemption (Slurm's scontrol requeue,
  // scancel) sends SIGTERM to every process of the job, the worker too. The trial stays for --resume.
  if (stopped_from_outside(o)) {
    display_.note(
        fmt::format("{}: the worker was stopped by signal {} from outside; the trial is not recorded and "
                    "runs on --resume",
                    trial.workload, o.outside_signal));
    if (watch_->stop_requested()) {
      stop_reason_ = fmt::format("interrupted by {}", watch_->signal_name());
      return false;
    }
    return true;
  }
  if (Status s = record(finished_trial_record(sweep_id_, o, group_model_id_), trial); !s) {
    store_error_ = s.error();
    return false;
  }
  ++ran_;
  if (o.status != TrialStatus::ok) ++failed_;
  times_.add(cost_of(trial), o.duration_s, o.measurement.repetitions + (options_.settings.warmup ? 1 : 0));
  pace_repetitions();
  const std::string& metric = o.measurement.main_metric;
  display_.trial_finished(FinishedTrialLine{
      .done = static_cast<size_t>(std::ranges::count_if(
          plan_.trials, [&](const PlannedTrial& t) { return !t.skipped() && done_.contains(t.hash); })),
      .total = plan_.trials.size() - plan_.n_skipped(),
      .status = o.status,
      .workload = trial.workload,
      .config = short_config(trial.config, keys_),
      .metric = metric,
      .value = metric.empty() ? std::nullopt : mean_of_metric(o.measurement.samples, metric),
      .reason = o.reason,
      .duration_s = o.duration_s});
  show();
  const PlannedTrial* next = next_pending();
  return next == nullptr || may_start(*next);
}

bool Runner::may_start(const PlannedTrial& next) {
  if (!stop_reason_.empty()) return false;
  if (watch_->stop_requested()) {
    stop_reason_ = fmt::format("interrupted by {}", watch_->signal_name());
    return false;
  }
  if (!spec_.time_budget_s || ran_ == 0) return true;  // every run makes progress, whatever the prediction
  const std::optional<double> predicted = times_.predict(cost_of(next), runs_cap(next));
  if (!predicted) return true;
  const double ends_at = budget_used_s() + *predicted;
  if (ends_at <= *spec_.time_budget_s) return true;
  stopped_by_time_budget_ = true;
  stop_reason_ = fmt::format("time budget {}: the next trial ({}, about {}) would end at {}",
                             format_duration(*spec_.time_budget_s), next.workload, format_duration(*predicted),
                             format_duration(ends_at));
  return false;
}

std::vector<TrialCost> Runner::remaining_costs() const {
  std::vector<TrialCost> remaining;
  for (const PlannedTrial& t : plan_.trials) {
    if (!t.skipped() && !done_.contains(t.hash)) remaining.push_back(cost_of(t));
  }
  return remaining;
}

// Once repetitions are capped: the most runs a trial makes (its warmup and --min-reps), unless its group's worker
// was launched before the cap (its trials keep the sweep's repetitions).
int Runner::runs_cap(const PlannedTrial& t) const {
  if (repetitions_cut_.empty() || (t.group == running_group_ && !running_group_capped_)) return 0;
  return options_.settings.min_reps + (options_.settings.warmup ? 1 : 0);
}

std::optional<double> Runner::eta_s() const {
  if (times_.count() == 0) return std::nullopt;
  double sum = 0;
  for (const PlannedTrial& t : plan_.trials) {
    if (!t.skipped() && !done_.contains(t.hash)) sum += *times_.predict(cost_of(t), runs_cap(t));
  }
  return sum;
}

// Under a time budget, after each trial: when the trials left would not fit the time left at the sweep's
// repetitions, the groups not started yet stop at --min-reps (the stopping rule may still end a trial sooner; a
// running worker keeps its settings). The repetitions are cut before any configuration is; the note says so once,
// and the summary repeats it.
void Runner::pace_repetitions() {
  const TrialSettings& settings = options_.settings;
  if (!spec_.time_budget_s || !repetitions_cut_.empty() || settings.max_reps <= settings.min_reps) return;
  const std::optional<double> eta = times_.eta_s(remaining_costs());
  const double left = *spec_.time_budget_s - budget_used_s();
  if (!eta || *eta <= left) return;
  const auto later = std::ranges::count_if(plan_.trials, [&](const PlannedTrial& t) {
    return !t.skipped() && !done_.contains(t.hash) && t.group != running_group_;
  });
  if (later == 0) return;  // the running worker's trials keep their settings: nothing left to cap
  repetitions_cut_ = fmt::format(
      "the last {} trials were held to at most {} repetitions, not {}: at {} the trials left were predicted to "
      "take {}, with {} of the time budget left",
      later, settings.min_reps, settings.max_reps, settings.max_reps, format_duration(*eta),
      format_duration(std::max(left, 0.0)));
  display_.note("time budget: " + repetitions_cut_);
}

void Runner::on_signal(int count) {
  // On the watcher's thread: only the display (which locks) is touched.
  display_.note(count == 1 ? "stopping after the current trial (Ctrl-C again stops at once)"
                           : "stopping at once: the running trial is abandoned and runs again on --resume");
}

void Runner::show(const std::string& current) {
  ProgressState state;
  for (const PlannedTrial& t : plan_.trials) {
    if (t.skipped()) continue;
    ++state.total;
    if (done_.contains(t.hash)) ++state.done;
  }
  state.failed = failed_;
  state.current = current;
  state.elapsed_s = elapsed_s();
  state.eta_s = eta_s();
  display_.update(state);
}

}  // namespace

Result<SweepRunResult> run_sweep(ResultsStore& store, int64_t sweep_id, const SweepSpec& spec, const SweepPlan& plan,
                                 const SweepRunOptions& options) {
  Runner runner(store, sweep_id, spec, plan, options);
  return runner.run();
}

Result<SweepCounts> count_sweep_trials(ResultsStore& store, int64_t sweep_id) {
  auto trials = store.trials(sweep_id);
  if (!trials) return trials.error();
  SweepCounts counts;
  for (const StoredTrial& t : *trials) {
    switch (t.trial.status) {
      case TrialStatus::ok:
        ++counts.ok;
        break;
      case TrialStatus::skipped:
        ++counts.skipped;
        break;
      default:
        ++counts.failed;
        break;
    }
  }
  return counts;
}

}  // namespace infertune
