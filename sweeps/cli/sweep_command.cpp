// `infertune sweep [SPEC.yaml] [dimension flags] [run options]`: reads the spec (none at all: the built-in
// default sweep), expands it into trials and runs them into the results store (sweeps/run/sweep_runner.h),
// showing progress, then prints a summary and the recommendation. --dry-run prints the plan instead;
// --resume continues an interrupted sweep.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/probe/probe_cache.h"
#include "engine/gpu/gpu_memory.h"
#include "engine/settings/setting_flags.h"
#include "sweeps/cli/slurm_job.h"
#include "sweeps/plan/plan_table.h"
#include "sweeps/plan/shard_plan.h"
#include "sweeps/plan/trial_plan.h"
#include "sweeps/recommend/recommend.h"
#include "sweeps/run/llama_cpp_trial.h"
#include "sweeps/run/sweep_records.h"
#include "sweeps/run/sweep_runner.h"
#include "sweeps/spec/spec_flags.h"
#include "sweeps/spec/spec_yaml.h"
#include "sweeps/store/record_sources.h"
#include "sweeps/store/results_store.h"
#include "sweeps/sweeps_commands.h"
#include "sweeps/trial/default_sweep.h"
#include "sweeps/trial/model_variants.h"

namespace infertune {

namespace {

// The exit status of a sweep left interrupted (Ctrl-C, the time budget): --resume continues it.
constexpr int kInterruptedExitCode = 3;

struct SweepOptions {
  std::string spec_file;
  SpecFlagText flags;
  bool dry_run = false;
  bool json = false;
  std::string db = "results.db";
  std::vector<std::string> resume;  // zero or one value
  CLI::Option* resume_option = nullptr;
  double ci_target = 0.03;
  int max_reps = 10;
  CLI::Option* max_reps_option = nullptr;
  int min_reps = 3;
  double trial_timeout_s = 600;
  double cooldown_s = 0;
  bool no_warmup = false;
  std::string cache_dir;
  bool no_quality = false;
  std::string shard;  // --shard I/N
  // --slurm: the sweep as a job array (sweeps/cli/slurm_job.h)
  bool slurm = false;
  int shards = 4;
  std::string partition, time_limit, constraint, slurm_dir;
};

// What --resume names: a sweep id (digits) or a spec hash (16 hex digits).
struct SweepReference {
  std::optional<int64_t> id;
  std::string spec_hash;
};

std::optional<SweepReference> parse_sweep_reference(const std::string& text) {
  if (text.size() == 16 && std::ranges::all_of(text, [](unsigned char c) { return std::isxdigit(c); })) {
    return SweepReference{.id = std::nullopt, .spec_hash = text};
  }
  int64_t id = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec == std::errc() && end == text.data() + text.size() && id > 0) return SweepReference{.id = id, .spec_hash = ""};
  return std::nullopt;
}

Result<TrialSettings> trial_settings(const SweepOptions& o) {
  if (!(o.ci_target > 0)) return fail("--ci-target {}: must be above 0", o.ci_target);
  if (o.min_reps < 1) return fail("--min-reps {}: must be at least 1", o.min_reps);
  if (o.max_reps < o.min_reps) return fail("--max-reps {}: must be at least --min-reps ({})", o.max_reps, o.min_reps);
  if (!(o.trial_timeout_s > 0)) return fail("--trial-timeout {}: must be above 0 seconds", o.trial_timeout_s);
  if (!(o.cooldown_s >= 0)) return fail("--cooldown {}: must be 0 or more seconds", o.cooldown_s);
  TrialSettings s;
  s.warmup = !o.no_warmup;
  s.min_reps = o.min_reps;
  s.max_reps = o.max_reps;
  s.ci_target = o.ci_target;
  s.cooldown_s = o.cooldown_s;
  return s;
}

// The spec as given on the command line (a YAML file and/or flags), or null text when neither was given.
Result<SpecText> command_line_spec(const std::string& spec_file, const SpecFlagText& flags) {
  SpecText text;
  if (!spec_file.empty()) {
    auto yaml = read_spec_yaml(spec_file);
    if (!yaml) return yaml.error();
    text = std::move(*yaml);
  }
  return merge_spec_flags(std::move(text), flags);
}

// The sweep's spec, planned (only the --shard slice of it when one is given), and its text as stored.
struct PlannedSweep {
  SpecText text;
  SweepSpec spec;
  SweepPlan plan;
  std::string shard;  // "2/3"; "": the whole plan
};

Result<PlannedSweep> plan_from_text(SpecText text, const std::string& shard) {
  auto spec = resolve_spec(text);
  if (!spec) return spec.error();
  // A -C mask naming CPUs this machine lacks is refused before any trial, as run and bench refuse it.
  if (Status fits = check_settings_on_machine(spec->settings, this_machine_cpus); !fits) return fits.error();
  auto plan = plan_sweep(*spec, gguf_model_shapes(), gpu_device_memory());
  if (!plan) return plan.error();
  PlannedSweep planned{.text = std::move(text), .spec = std::move(*spec), .plan = std::move(*plan), .shard = ""};
  if (!shard.empty()) {
    auto slice = parse_shard(shard, "--shard");
    if (!slice) return slice.error();
    planned.plan = shard_of(planned.plan, *slice);
    planned.shard = slice->text();
  }
  return planned;
}

// `infertune sweep` with neither a spec nor a dimension flag: the built-in default sweep, its synthetic
// models produced first (once; they stay in the model cache), written as the text that resolves to it.
Result<SpecText> default_sweep_text(const std::string& cache_dir) {
  auto probe = load_or_measure_host_probe(false);
  if (!probe) return fail("host probe: {}", probe.error().message);
  const std::filesystem::path dir = cache_dir.empty() ? default_model_cache_dir() : std::filesystem::path(cache_dir);
  const DefaultSweep sweep = default_sweep(probe->host.physical_cores, probe->host.memory_bytes, dir);
  fmt::print(stderr, "no spec and no model given: the built-in default sweep on {} synthetic models ({})\n",
             sweep.models.size(), dir.string());
  size_t announced = sweep.models.size();  // none yet
  const Status produced = produce_default_models(sweep, [&](size_t model, const SynthProgress& p) {
    if (model == announced) return;
    announced = model;
    fmt::print(stderr, "  synthesizing {} ({:.0f} MiB) into the model cache\n", sweep.models[model].name,
               double(p.bytes_total) / 1048576.0);
  });
  if (!produced) return produced.error();
  return spec_text_of(sweep.spec);
}

bool wants_default_sweep(const std::string& spec_file, const SpecFlagText& flags) {
  return spec_file.empty() && !flags.any();
}

Result<SpecText> given_or_default_spec(const SweepOptions& o) {
  if (wants_default_sweep(o.spec_file, o.flags)) return default_sweep_text(o.cache_dir);
  return command_line_spec(o.spec_file, o.flags);
}

int dry_run(const SweepOptions& o) {
  auto text = given_or_default_spec(o);
  if (!text) return report_error("sweep", text.error().message);
  auto planned = plan_from_text(std::move(*text), o.shard);
  if (!planned) return report_error("sweep", planned.error().message);
  if (!planned->shard.empty()) fmt::print(stderr, "shard {} of the plan\n", planned->shard);
  if (o.json) {
    fmt::print("{}\n", plan_to_json(planned->plan).dump(2));
  } else {
    fmt::print("{}", format_plan(planned->spec, planned->plan));
  }
  return 0;
}

// The sweep --resume continues, or nullopt for a new one. A bare --resume with no sweep of the spec starts
// one (so "resume until done" works from any point, even a runner killed before it created the sweep).
Result<std::optional<SweepRecord>> sweep_to_resume(ResultsStore& store, const std::optional<SweepReference>& ref,
                                                   const PlannedSweep& planned, const std::string& db) {
  const SweepPlan& plan = planned.plan;
  std::optional<SweepRecord> sweep;
  if (ref && ref->id) {
    auto found = store.find_sweep(*ref->id);
    if (!found) return found.error();
    if (!*found) return fail("--resume {}: {} has no sweep {}", *ref->id, db, *ref->id);
    sweep = **found;
  } else {
    const std::string hash = ref ? ref->spec_hash : plan.spec_hash;
    auto found = store.find_latest_sweep(hash, planned.shard);
    if (!found) return found.error();
    const std::string slice = planned.shard.empty() ? "" : ", shard " + planned.shard;
    if (!*found && ref) return fail("--resume {}: {} has no sweep with that spec hash{}", hash, db, slice);
    if (!*found) {
      fmt::print(stderr, "no sweep of this spec (hash {}{}) in {} to resume: starting one\n", hash, slice, db);
      return std::optional<SweepRecord>{};
    }
    sweep = **found;
  }
  if (sweep->spec_hash != plan.spec_hash) {
    return fail(
        "--resume: sweep {} ran the spec with hash {}, but this spec's hash is {} (give the same spec, "
        "or --resume {} alone to use the stored one)",
        sweep->id, sweep->spec_hash, plan.spec_hash, sweep->id);
  }
  if (sweep->shard != planned.shard) {
    const auto slice = [](const std::string& s) { return s.empty() ? std::string("the whole plan") : "shard " + s; };
    return fail("--resume: sweep {} ran {}, not {}", sweep->id, slice(sweep->shard), slice(planned.shard));
  }
  return sweep;
}

Result<int64_t> create_sweep(ResultsStore& store, const PlannedSweep& planned, const HostProbe& probe) {
  if (planned.spec.engine == SweepEngine::llama_cpp) {
    if (Status s = check_llama_cpp_tools(planned.spec.llama_cpp_bin, planned.spec.workloads); !s) {
      return fail("engine llama.cpp: {}", s.error().message);
    }
  }
  auto host = store.upsert_host(host_record(probe));
  if (!host) return host.error();
  // A llama.cpp sweep's trials are llama.cpp's: its build row names llama.cpp's tools, not this binary.
  Result<BuildRecord> record = planned.spec.engine == SweepEngine::llama_cpp
                                   ? llama_cpp_build_record(planned.spec.llama_cpp_bin)
                                   : Result<BuildRecord>(this_build_record());
  if (!record) return fail("engine llama.cpp: {}", record.error().message);
  auto build = store.upsert_build(*record);
  if (!build) return build.error();
  return store.create_sweep(NewSweep{.spec = spec_text_yaml(planned.text),
                                     .spec_hash = planned.plan.spec_hash,
                                     .host_id = *host,
                                     .build_id = *build,
                                     .shard = planned.shard});
}

void print_recommendation(ResultsStore& store, int64_t sweep_id, const SweepSpec& spec, bool json) {
  auto report = recommend_sweep(store, sweep_id, recommend_options_for(spec));
  if (!report) {
    fmt::print(stderr, "infertune sweep: no recommendation: {}\n", report.error().message);
    return;
  }
  if (json) {
    fmt::print("{}\n", recommendation_json(*report).dump(2));
  } else {
    fmt::print("\n{}", format_recommendation_text(*report));
  }
}

// The closing lines: counts, where the results are, and how to go on.
int print_summary(ResultsStore& store, int64_t sweep_id, const SweepRunResult& result, const PlannedSweep& planned,
                  const SweepOptions& o) {
  auto counts = count_sweep_trials(store, sweep_id);
  if (!counts) return report_error("sweep", counts.error().message);
  const size_t left = planned.plan.trials.size() - std::min(planned.plan.trials.size(), counts->recorded());
  std::FILE* out = o.json ? stderr : stdout;  // --json keeps stdout for the recommendation document
  const std::string& reason = result.stop_reason;
  fmt::print(out, "sweep {} {}{}: {} ok, {} failed, {} skipped", sweep_id, to_string(result.status),
             reason.empty() ? "" : " (" + reason + ")", counts->ok, counts->failed, counts->skipped);
  if (left > 0) fmt::print(out, ", {} not run yet", left);
  fmt::print(out, "; results in {}\n", o.db);
  if (!result.repetitions_cut.empty()) fmt::print(out, "  time budget: {}\n", result.repetitions_cut);
  if (result.status == SweepStatus::done) {
    fmt::print(out, "  infertune export --db {} --sweep {}\n", o.db, sweep_id);
    if (!planned.shard.empty()) {
      fmt::print(out,
                 "  shard {}: the recommendation below covers this slice only; merge the slices' stores "
                 "(infertune merge ALL.db SHARD.db ...) for the whole sweep's\n",
                 planned.shard);
    }
    print_recommendation(store, sweep_id, planned.spec, o.json);
    return 0;
  }
  fmt::print(out, "  resume with: infertune sweep --resume {} --db {}\n", sweep_id, o.db);
  // What a time budget let run is still worth a recommendation; it says which trials it covers.
  if (result.stopped_by_time_budget && counts->ok > 0) {
    fmt::print(out, "  the recommendation below covers the {} trials that ran within the time budget\n",
               counts->recorded());
    print_recommendation(store, sweep_id, planned.spec, o.json);
  }
  return kInterruptedExitCode;
}

// The run options every array task passes on: the values this command runs with.
std::vector<std::string> run_flags(const SweepOptions& o) {
  std::vector<std::string> flags{
      "--ci-target", fmt::format("{}", o.ci_target), "--max-reps",      std::to_string(o.max_reps),
      "--min-reps",  std::to_string(o.min_reps),     "--trial-timeout", fmt::format("{}", o.trial_timeout_s),
      "--cooldown",  fmt::format("{}", o.cooldown_s)};
  if (o.no_warmup) flags.push_back("--no-warmup");
  if (o.no_quality) flags.push_back("--no-quality");
  if (!o.cache_dir.empty()) {
    flags.push_back("--cache-dir");
    flags.push_back(std::filesystem::absolute(o.cache_dir).string());
  }
  return flags;
}

// --slurm: writes the job array (and submits it with sbatch unless --dry-run); the tasks run the sweep.
int slurm_sweep(const SweepOptions& o) {
  if (!o.shard.empty()) return report_error("sweep", "--slurm makes the shards itself: leave out --shard");
  if (wants_default_sweep(o.spec_file, o.flags)) {
    return report_error("sweep", "--slurm needs a spec or model flags (the built-in default sweep is for one machine)");
  }
  if (auto settings = trial_settings(o); !settings) return report_error("sweep", settings.error().message);
  auto text = command_line_spec(o.spec_file, o.flags);
  if (!text) return report_error("sweep", text.error().message);
  auto planned = plan_from_text(std::move(*text), "");
  if (!planned) return report_error("sweep", planned.error().message);
  SlurmJobRequest request;
  request.dir = o.slurm_dir.empty() ? "infertune-slurm-" + planned->plan.spec_hash : o.slurm_dir;
  request.spec_yaml = spec_text_yaml(planned->text);
  request.spec_hash = planned->plan.spec_hash;
  request.shards = std::min<int>(o.shards, std::max<size_t>(planned->plan.trials.size(), 1));
  request.partition = o.partition;
  request.time_limit = o.time_limit;
  request.constraint = o.constraint;
  request.run_flags = run_flags(o);
  request.infertune = std::filesystem::read_symlink("/proc/self/exe");
  auto job = write_slurm_job(request);
  if (!job) return report_error("sweep", job.error().message);
  fmt::print("{} trials in {} slices: {} (spec {})\n", planned->plan.trials.size(), request.shards,
             job->script.string(), job->spec.string());
  if (o.dry_run) {
    fmt::print("not submitted (--dry-run): sbatch {}\n", job->script.string());
  } else {
    auto id = submit_slurm_job(job->script);
    if (!id) return report_error("sweep", id.error().message);
    fmt::print("submitted job array {} ({} tasks); `squeue -j {}` follows it\n", *id, request.shards, *id);
  }
  fmt::print("when it is done: {}\n", job->merge_command);
  return 0;
}

int run_sweep_command(SweepOptions o) {
  // The time budget counts the whole command: the default sweep's models are synthesized before the run.
  const auto command_start = std::chrono::steady_clock::now();
  if (o.slurm) return slurm_sweep(o);
  const bool resuming = o.resume_option->count() > 0;
  std::string resume_value = o.resume.empty() ? "" : o.resume.front();
  // `--resume spec.yaml`: CLI11 hands a spec given after a bare --resume to --resume.
  if (!resume_value.empty() && !parse_sweep_reference(resume_value) && o.spec_file.empty()) {
    o.spec_file = resume_value;
    resume_value.clear();
  }
  const std::optional<SweepReference> ref = resume_value.empty() ? std::nullopt : parse_sweep_reference(resume_value);
  if (!resume_value.empty() && !ref) {
    return report_error("sweep", fmt::format("--resume {}: expected a sweep id or a 16-digit spec hash", resume_value));
  }
  if (o.dry_run) return dry_run(o);
  // The default sweep is the out-of-the-box tour: fewer repetitions keep it within a few minutes. (`--resume ID`
  // alone may name any sweep, so it keeps the general default.)
  const bool default_sweep = wants_default_sweep(o.spec_file, o.flags) && !(ref && ref->id);
  if (default_sweep && o.max_reps_option->count() == 0) {
    o.max_reps = std::max(kDefaultSweepMaxReps, o.min_reps);
  }
  auto settings = trial_settings(o);
  if (!settings) return report_error("sweep", settings.error().message);

  // The spec: from the command line, or, for --resume ID without one, the text the sweep stored. The store
  // is opened after the spec is planned otherwise, so a bad spec leaves no empty database behind.
  const bool spec_from_store = ref && ref->id && o.spec_file.empty() && !o.flags.any();
  std::optional<ResultsStore> store;
  Result<SpecText> text = SpecText{};
  if (spec_from_store) {
    auto opened = ResultsStore::open(o.db, {.create = false});
    if (!opened) return report_error("sweep", opened.error().message);
    store.emplace(std::move(*opened));
    auto sweep = store->find_sweep(*ref->id);
    if (!sweep) return report_error("sweep", sweep.error().message);
    if (!*sweep) return report_error("sweep", fmt::format("--resume {}: {} has no sweep {}", *ref->id, o.db, *ref->id));
    text = parse_spec_yaml((*sweep)->spec, fmt::format("{} sweep {} spec", o.db, *ref->id));
  } else {
    text = given_or_default_spec(o);
  }
  if (!text) return report_error("sweep", text.error().message);
  auto planned = plan_from_text(std::move(*text), o.shard);
  if (!planned) return report_error("sweep", planned.error().message);
  if (!store) {
    auto opened = ResultsStore::open(o.db);
    if (!opened) return report_error("sweep", opened.error().message);
    store.emplace(std::move(*opened));
  }

  std::optional<SweepRecord> resumed;
  if (resuming) {
    auto found = sweep_to_resume(*store, ref, *planned, o.db);
    if (!found) return report_error("sweep", found.error().message);
    resumed = *found;
    if (resumed && resumed->status == SweepStatus::done) {
      fmt::print("sweep {} is complete: nothing to resume\n", resumed->id);
      SweepRunResult complete;
      complete.status = SweepStatus::done;
      return print_summary(*store, resumed->id, complete, *planned, o);
    }
  }
  auto probe = load_or_measure_host_probe(false);
  if (!probe) return report_error("sweep", fmt::format("host probe: {}", probe.error().message));
  int64_t sweep_id = 0;
  if (resumed) {
    sweep_id = resumed->id;
    if (Status s = store->set_sweep_status(sweep_id, SweepStatus::running); !s) {
      return report_error("sweep", s.error().message);
    }
  } else {
    auto created = create_sweep(*store, *planned, *probe);
    if (!created) return report_error("sweep", created.error().message);
    sweep_id = *created;
  }
  fmt::print(stderr, "sweep {}{}: {} trials ({} skipped) in {} reload groups -> {}\n", sweep_id,
             planned->shard.empty() ? "" : " (shard " + planned->shard + ")", planned->plan.trials.size(),
             planned->plan.n_skipped(), planned->plan.groups.size(), o.db);

  SweepRunOptions run;
  run.settings = *settings;
  run.trial_timeout_s = o.trial_timeout_s;
  run.variant_cache_dir = o.cache_dir;
  run.measure_quality = !o.no_quality;
  run.progress_terminal = isatty(fileno(stderr)) != 0;
  if (probe->bandwidth.read_all_cores.best > 0) run.host_read_bandwidth_gbs = probe->bandwidth.read_all_cores.best;
  run.time_spent_before_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - command_start).count();
  auto result = run_sweep(*store, sweep_id, planned->spec, planned->plan, run);
  if (!result) return report_error("sweep", fmt::format("sweep {} failed: {}", sweep_id, result.error().message));
  return print_summary(*store, sweep_id, *result, *planned, o);
}

}  // namespace

void add_sweep_command(Subcommands& commands) {
  auto options = std::make_shared<SweepOptions>();
  CLI::App* sub =
      commands.add("sweep",
                   "Run a sweep spec (YAML and/or flags) into a results store, then recommend a configuration; "
                   "exit status 3 when it is left interrupted (--resume continues it)",
                   [options] { return run_sweep_command(*options); });
  sub->add_option("spec", options->spec_file, "The sweep spec (YAML); flags replace its keys");
  sub->add_flag("--dry-run", options->dry_run, "Print the expanded trials, grouped, with predicted memory");
  sub->add_flag("--json", options->json, "The plan (--dry-run) or the recommendation as JSON on stdout");
  sub->add_option("--db", options->db, "The results store (SQLite file; default results.db)");
  options->resume_option =
      sub->add_option("--resume", options->resume,
                      "Continue a sweep (by id, or spec hash; alone: the latest sweep of this spec), "
                      "running only the trials it lacks")
          ->expected(0, 1);
  sub->add_option("--ci-target", options->ci_target, "Repeat until the 95% CI half-width / mean is within this (0.03)");
  options->max_reps_option = sub->add_option(
      "--max-reps", options->max_reps, "At most this many timed repetitions per trial (10; the default sweep: 5)");
  sub->add_option("--min-reps", options->min_reps, "At least this many timed repetitions per trial (3)");
  sub->add_option("--trial-timeout", options->trial_timeout_s, "Seconds a trial may take before it is killed (600)");
  sub->add_option("--cooldown", options->cooldown_s, "Idle seconds before each trial (0)");
  sub->add_flag("--no-warmup", options->no_warmup, "No untimed warmup run before the repetitions");
  sub->add_option("--cache-dir", options->cache_dir,
                  "Where quantization variants of a base model (and their quality figures) are written");
  sub->add_flag("--no-quality", options->no_quality,
                "Do not score the variants of a real base model (perplexity and KL divergence against the base on "
                "the python-tutorial corpus, once per variant)");
  sub->add_flag("--slurm", options->slurm,
                "Run the sweep as a Slurm job array: write the batch script and submit it (with --dry-run: only write "
                "it); each task runs one --shard slice into its own store, resuming after a requeue");
  sub->add_option("--shards", options->shards, "--slurm: array tasks, one slice of the plan each (4)")
      ->check(CLI::Range(1, kMaxShards));
  sub->add_option("--partition", options->partition, "--slurm: the partition (default: the cluster's)");
  sub->add_option("--time", options->time_limit, "--slurm: each task's time limit, as sbatch --time (1:00:00)");
  sub->add_option("--constraint", options->constraint, "--slurm: node features the tasks need (sbatch --constraint)");
  sub->add_option("--slurm-dir", options->slurm_dir,
                  "--slurm: the job's folder on storage every node sees: spec, script, logs and one store per slice "
                  "(default infertune-slurm-SPECHASH)");
  sub->add_option("--shard", options->shard,
                  "Run only the I-th of N disjoint, balanced slices of the plan (I/N, e.g. 2/3), into this store; "
                  "`infertune merge` combines the slices' stores");
  add_sweep_spec_flags(*sub, options->flags);
  commands.add_aliases("sweep", sweep_flag_aliases());
}

}  // namespace infertune
