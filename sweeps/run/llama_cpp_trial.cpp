#include "sweeps/run/llama_cpp_trial.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <span>

#include "engine/context/flash_attention.h"
#include "engine/gpu/gpu_memory.h"
#include "engine/gpu/layer_split.h"
#include "kernels/ggml_type.h"
#include "sweeps/metrics/peak_rss.h"
#include "sweeps/run/llama_server_process.h"
#include "sweeps/run/worker_exit.h"
#include "sweeps/run/worker_process.h"
#include "sweeps/store/metric_names.h"
#include "sweeps/store/stable_hash.h"
#include "sweeps/trial/repetition_control.h"
#include "sweeps/trial/served_load.h"

namespace infertune {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr std::chrono::seconds kToolDeadline = std::chrono::hours(24);  // the runner's trial timeout is the real limit
constexpr int kBatchedBenchAttempts = 10;
constexpr std::chrono::seconds kServerLoadPatience = std::chrono::minutes(10);
constexpr std::chrono::milliseconds kPeakRssInterval = 100ms;

void add(std::vector<std::string>& argv, std::string flag, std::string value) {
  argv.push_back(std::move(flag));
  argv.push_back(std::move(value));
}

// The settings both tools take, as their flags; what neither can express goes to `warnings`.
void setting_flags(const EngineSettings& s, std::vector<std::string>& argv, std::vector<std::string>& warnings) {
  if (s.placement.threads > 0) add(argv, "-t", std::to_string(s.placement.threads));
  if (!s.placement.cpu_mask.empty() && s.placement.cpu_mask != "0x0") add(argv, "-C", s.placement.cpu_mask);
  if (s.placement.cpu_strict) add(argv, "--cpu-strict", "1");
  add(argv, "--poll", std::to_string(s.placement.poll));
  if (s.placement.numa != NumaMode::none) add(argv, "--numa", numa_mode_name(s.placement.numa));
  if (s.placement.priority != 0) add(argv, "--prio", std::to_string(s.placement.priority));
  if (s.n_gpu_layers == kGpuLayersAuto) {
    warnings.push_back("-ngl auto: llama.cpp's tools take a number; ran with the tool's default");
  } else {
    add(argv, "-ngl", std::to_string(s.n_gpu_layers < 0 ? 999 : s.n_gpu_layers));
  }
  if (s.main_gpu != 0) add(argv, "-mg", std::to_string(s.main_gpu));
  if (s.split_mode != SplitMode::layer) add(argv, "-sm", std::string(split_mode_name(s.split_mode)));
  if (!s.tensor_split.empty()) add(argv, "-ts", tensor_split_text(s.tensor_split));  // both tools take "3/1"
  add(argv, "-b", std::to_string(s.context.n_batch));
  add(argv, "-ub", std::to_string(s.context.n_ubatch));
  add(argv, "-ctk", std::string(ggml_type_name(s.context.type_k)));
  add(argv, "-ctv", std::string(ggml_type_name(s.context.type_v)));
  add(argv, "-fa", std::string(flash_attention_name(s.context.flash_attn)));
}

void llama_bench_flags(const EngineSettings& s, std::vector<std::string>& argv, std::vector<std::string>& warnings) {
  setting_flags(s, argv, warnings);
  add(argv, "-nkvo", s.kv_offload ? "0" : "1");
  add(argv, "--repack", s.repack ? "1" : "0");
  add(argv, "-lm", s.use_mmap ? "mmap" : "none");
  if (s.placement.threads_batch > 0 && s.placement.threads_batch != s.placement.threads) {
    warnings.push_back("-tb: llama-bench has no separate batch threads; prompts ran on -t");
  }
  if (s.context.n_ctx != 0) warnings.push_back("-c: llama-bench sizes the context to each test");
  if (s.context.n_seq_max > 1) warnings.push_back("-np: llama-bench runs one sequence");
}

void batched_bench_flags(const EngineSettings& s, const Workload& w, std::vector<std::string>& argv,
                         std::vector<std::string>& warnings) {
  setting_flags(s, argv, warnings);
  if (s.placement.threads_batch > 0) add(argv, "-tb", std::to_string(s.placement.threads_batch));
  const uint32_t needed = static_cast<uint32_t>(w.n_parallel * (w.n_prompt + w.n_gen));
  add(argv, "-c", std::to_string(std::max(s.context.n_ctx, needed)));
  if (!s.kv_offload) argv.push_back("--no-kv-offload");
  if (!s.use_mmap) argv.push_back("--no-mmap");
  if (!s.repack) argv.push_back("--no-repack");
}

// llama-server: the trial's context as its slots (-np sequences sharing -c cells, as this engine's cache shares them:
// -kvu), the model named "trial" for the requests, and no web UI.
void server_flags(const EngineSettings& s, std::vector<std::string>& argv, std::vector<std::string>& warnings) {
  setting_flags(s, argv, warnings);
  if (s.placement.threads_batch > 0) add(argv, "-tb", std::to_string(s.placement.threads_batch));
  add(argv, "-c", std::to_string(s.context.n_ctx));
  add(argv, "-np", std::to_string(std::max<uint32_t>(s.context.n_seq_max, 1)));
  argv.insert(argv.end(), {"-kvu", "--alias", "trial", "--no-webui"});
  if (!s.kv_offload) argv.push_back("--no-kv-offload");
  if (!s.use_mmap) argv.push_back("--no-mmap");
  if (!s.repack) argv.push_back("--no-repack");
}

// llama-batched-bench prints its rows through llama.cpp's logger, whose thread the process's exit cuts off (the
// logger is never destroyed, by design): a row printed last is lost in about half the runs. So a cheap item follows
// the measured one -- a one-token generation after the same prompts, or a one-token prompt before the same
// generation, whichever costs less (a prompt token taken as a sixteenth of a generation step) -- and the measured
// row is printed while it runs. Its own row is ignored.
void batched_bench_items(const Workload& w, std::vector<std::string>& argv) {
  const bool prompt_is_cheaper = w.n_parallel * w.n_prompt <= 16 * w.n_gen;
  add(argv, "-npp", prompt_is_cheaper ? std::to_string(w.n_prompt) : fmt::format("{},1", w.n_prompt));
  add(argv, "-ntg", prompt_is_cheaper ? fmt::format("{},1", w.n_gen) : std::to_string(w.n_gen));
  add(argv, "-npl", std::to_string(w.n_parallel));
}

struct ToolRun {
  std::string output;                     // stdout
  std::vector<std::string> stderr_tail;   // its last lines
  std::optional<int64_t> peak_rss_bytes;  // the tool's own
};

// Runs the tool to its end (waiting at most `patience` for each line of output); a non-zero exit or a signal is
// an error with the tool's last stderr lines. Its peak RSS is read from its /proc status every 0.1 s while it runs:
// a high-water mark, so only growth in its last moments is missed. (wait4's ru_maxrss would count the runner's own
// pages at the fork.)
Result<ToolRun> run_tool(const std::vector<std::string>& argv, std::chrono::seconds patience = kToolDeadline) {
  WorkerCommand command;
  command.executable = argv.front();
  command.arguments.assign(argv.begin() + 1, argv.end());
  auto process = WorkerProcess::start(command);
  if (!process) return process.error();
  process->close_input();
  ToolRun run;
  for (auto last_output = WorkerProcess::Clock::now();;) {
    const WorkerProcess::Line line = process->next_line(WorkerProcess::Clock::now() + kPeakRssInterval);
    if (const auto peak = peak_rss_bytes_of(process->pid()); peak && peak > run.peak_rss_bytes) {
      run.peak_rss_bytes = peak;
    }
    if (line.state == WorkerProcess::LineState::line) {
      run.output += line.text + "\n";
      last_output = WorkerProcess::Clock::now();
    } else if (line.state != WorkerProcess::LineState::deadline ||
               WorkerProcess::Clock::now() - last_output >= patience) {
      break;
    }
  }
  const WorkerExit exit = process->finish(5000ms);
  run.stderr_tail = process->stderr_tail();
  if (!exit.exited || exit.exit_code != 0) {
    return fail("{} {}{}", fs::path(argv.front()).filename().string(), exit.describe(),
                stderr_suffix(run.stderr_tail, 8));
  }
  return run;
}

void note_peak_rss(TrialMeasurement& m, std::optional<int64_t> peak) {
  if (peak && (!m.peak_rss_bytes || *peak > *m.peak_rss_bytes)) m.peak_rss_bytes = peak;
}

// One run of llama-bench (`repetitions` repetitions) or llama-batched-bench (one), its samples numbered on from
// m.repetitions and added to `m`, with the tool's warnings (the first time) and its peak RSS.
Status measure_tool_run(const fs::path& bin_dir, const std::string& model_path, const TrialConfig& trial,
                        int repetitions, bool warmup, TrialMeasurement& m) {
  auto invocation = llama_cpp_invocation(bin_dir, model_path, trial, repetitions, warmup);
  if (!invocation) return invocation.error();
  if (m.warnings.empty()) m.warnings = invocation->warnings;
  // A batched-bench run whose row the logger still lost (batched_bench_items) is run again.
  const bool batched = trial.workload.kind == WorkloadKind::Batched;
  Result<std::vector<Sample>> samples = fail("not run");
  for (int attempt = 0; attempt < (batched ? kBatchedBenchAttempts : 1) && !samples; ++attempt) {
    auto run = run_tool(invocation->argv);
    if (!run) return run.error();
    note_peak_rss(m, run->peak_rss_bytes);
    samples = batched ? batched_bench_samples(run->output, trial.workload, m.repetitions)
                      : llama_bench_samples(run->output, trial.workload, m.repetitions);
  }
  if (!samples) return samples.error();
  m.samples.insert(m.samples.end(), samples->begin(), samples->end());
  return {};
}

std::string main_metric_of(const Workload& w) {
  switch (w.kind) {
    case WorkloadKind::Prompt:
      return metric::kPromptTokensPerSecond;
    case WorkloadKind::Generate:
      return metric::kGenTokensPerSecond;
    default:
      return metric::kAggregateTokensPerSecond;
  }
}

std::vector<double> values_of(const std::vector<Sample>& samples, const std::string& metric) {
  std::vector<double> values;
  for (const Sample& s : samples) {
    if (s.metric == metric && !s.is_warmup) values.push_back(s.value);
  }
  return values;
}

// `tool --version` as lines: "version: 0.5.0-dev (build 0, commit unknown)", "built with GNU 12.2.0 for ...".
Result<std::vector<std::string>> version_lines(const fs::path& tool) {
  auto run = run_tool({tool.string(), "--version"}, 10s);
  if (!run) return run.error();
  std::vector<std::string> lines;
  for (size_t start = 0; start < run->output.size();) {
    const size_t end = run->output.find('\n', start);
    lines.push_back(run->output.substr(start, end - start));
    start = end + 1;
  }
  lines.insert(lines.end(), run->stderr_tail.begin(), run->stderr_tail.end());
  if (lines.empty()) return fail("{} --version printed nothing", tool.string());
  return lines;
}

// A served workload: llama-server started once for the trial, and the workload's users (ServedLoad, the same as
// for this engine's server) against it: a warm-up run when the sweep warms up, then runs until the stopping rule.
// The peak RSS is the server's.
Result<TrialMeasurement> measure_served(const fs::path& bin_dir, const std::string& model_path,
                                        const TrialConfig& trial, const TrialSettings& settings,
                                        const std::atomic<bool>* stop) {
  auto invocation = llama_cpp_invocation(bin_dir, model_path, trial, 1, settings.warmup);
  if (!invocation) return invocation.error();
  auto server = LlamaServerProcess::start(invocation->argv, kServerLoadPatience, stop);
  if (!server) return server.error();
  TrialMeasurement m;
  m.main_metric = metric::kAggregateTokensPerSecond;
  m.warnings = invocation->warnings;
  ServedLoad load(trial.workload, (*server)->url(), "trial");
  // A failed run names the server's own end when it is what failed the requests (a crash, an abort).
  const auto run_once = [&](SampleSink& sink) -> Result<double> {
    auto value = load.run(sink);
    if (!value) return fail("{}{}", value.error().message, (*server)->exit_reason());
    return value;
  };
  if (Status s = run_repetitions(run_once, settings, stop, m); !s) return s.error();
  m.peak_rss_bytes = (*server)->peak_rss_bytes();
  return m;
}

}  // namespace

Result<LlamaCppInvocation> llama_cpp_invocation(const fs::path& bin_dir, const std::string& model_path,
                                                const TrialConfig& trial, int repetitions, bool warmup) {
  LlamaCppInvocation out;
  const Workload& w = trial.workload;
  switch (w.kind) {
    case WorkloadKind::Prompt:
    case WorkloadKind::Generate: {
      out.argv = {(bin_dir / "llama-bench").string(), "-m", model_path, "-o", "json", "-r",
                  std::to_string(repetitions)};
      if (!warmup) out.argv.push_back("--no-warmup");
      add(out.argv, "-p", std::to_string(w.kind == WorkloadKind::Prompt ? w.n_prompt : 0));
      add(out.argv, "-n", std::to_string(w.kind == WorkloadKind::Generate ? w.n_gen : 0));
      add(out.argv, "-d", std::to_string(w.depth));
      llama_bench_flags(trial.settings, out.argv, out.warnings);
      return out;
    }
    case WorkloadKind::Batched:
      out.argv = {(bin_dir / "llama-batched-bench").string(), "-m", model_path, "--output-format", "jsonl"};
      batched_bench_items(w, out.argv);
      batched_bench_flags(trial.settings, w, out.argv, out.warnings);
      return out;
    case WorkloadKind::PromptGenerate:
      return fail(
          "{}: llama-bench measures a prompt then generation as one combined rate, not the pp and tg rates "
          "the store keeps; sweep pp and tg workloads for llama.cpp",
          w.name());
    case WorkloadKind::Serve:
      out.argv = {(bin_dir / "llama-server").string(), "-m", model_path};
      server_flags(trial.settings, out.argv, out.warnings);
      return out;
  }
  return fail("unknown workload kind");
}

Status check_llama_cpp_tools(const fs::path& bin_dir, const std::vector<Workload>& workloads) {
  std::vector<std::string> needed = {"llama-bench"};
  for (const Workload& w : workloads) {
    if (w.kind == WorkloadKind::Batched) needed.push_back("llama-batched-bench");
    if (w.kind == WorkloadKind::Serve) needed.push_back("llama-server");
  }
  for (const std::string& tool : needed) {
    const fs::path path = bin_dir / tool;
    if (access(path.c_str(), X_OK) != 0) {
      return fail(
          "{} is not there or not executable (the sweep's workloads need it; scripts/build-llama-cpp {} builds it)",
          path.string(), tool);
    }
  }
  return {};
}

Result<std::vector<Sample>> llama_bench_samples(const std::string& json_output, const Workload& workload,
                                                int64_t first_repetition) {
  // The JSON document starts at the first line that opens an array (log lines may come before it).
  const size_t begin = json_output.starts_with("[") ? 0 : json_output.find("\n[");
  const nlohmann::json doc =
      begin == std::string::npos ? nlohmann::json() : nlohmann::json::parse(json_output.substr(begin), nullptr, false);
  if (!doc.is_array() || doc.size() != 1 || !doc[0].is_object()) {
    return fail("llama-bench printed no JSON test result (expected one test, got: {:.200})", json_output);
  }
  const nlohmann::json& test = doc[0];
  const auto rates = test.find("samples_ts");
  const auto times = test.find("samples_ns");
  if (rates == test.end() || times == test.end() || !rates->is_array() || !times->is_array() ||
      rates->size() != times->size() || rates->empty()) {
    return fail("llama-bench's result has no samples_ts / samples_ns of equal length");
  }
  const bool prompt = workload.kind == WorkloadKind::Prompt;
  std::vector<Sample> samples;
  for (size_t i = 0; i < rates->size(); ++i) {
    const int64_t rep = first_repetition + static_cast<int64_t>(i);
    if (!(*rates)[i].is_number() || !(*times)[i].is_number()) return fail("llama-bench's samples are not numbers");
    samples.push_back(
        {prompt ? metric::kPromptTokensPerSecond : metric::kGenTokensPerSecond, rep, (*rates)[i].get<double>(), false});
    if (prompt) samples.push_back({metric::kTimeToFirstTokenMs, rep, (*times)[i].get<double>() / 1e6, false});
  }
  return samples;
}

Result<std::vector<Sample>> batched_bench_samples(const std::string& jsonl_output, const Workload& workload,
                                                  int64_t repetition) {
  size_t start = 0;
  while (start < jsonl_output.size()) {
    const size_t end = std::min(jsonl_output.find('\n', start), jsonl_output.size());
    // A log line of llama.cpp's may precede the row on the same line (its logger writes without a newline).
    const std::string_view line = std::string_view(jsonl_output).substr(start, end - start);
    const size_t brace = line.find('{');
    start = end + 1;
    if (brace == std::string_view::npos) continue;
    const nlohmann::json row = nlohmann::json::parse(line.substr(brace), nullptr, false);
    if (!row.is_object() || !row.contains("speed") || !row.contains("speed_pp")) continue;
    if (row.value("pp", -1) != workload.n_prompt || row.value("tg", -1) != workload.n_gen ||
        row.value("pl", -1) != workload.n_parallel) {
      continue;
    }
    return std::vector<Sample>{{metric::kAggregateTokensPerSecond, repetition, row["speed"].get<double>(), false},
                               {metric::kPromptTokensPerSecond, repetition, row["speed_pp"].get<double>(), false}};
  }
  return fail("llama-batched-bench printed no result row for pp {} tg {} pl {}", workload.n_prompt, workload.n_gen,
              workload.n_parallel);
}

Result<TrialMeasurement> run_llama_cpp_trial(const fs::path& bin_dir, const std::string& model_path,
                                             const nlohmann::json& config, const TrialSettings& settings,
                                             const std::atomic<bool>* stop) {
  auto trial = parse_trial_config(config);
  if (!trial) return trial.error();
  if (settings.cooldown_s > 0) trial_cool_down(settings.cooldown_s, stop);
  if (trial->workload.kind == WorkloadKind::Serve) return measure_served(bin_dir, model_path, *trial, settings, stop);
  TrialMeasurement m;
  m.main_metric = main_metric_of(trial->workload);
  const RepetitionRule rule = repetition_rule(settings);
  // llama-batched-bench has no repetitions of its own: one run per repetition.
  int next_run = trial->workload.kind == WorkloadKind::Batched ? 1 : settings.min_reps;
  while (!trial_stop_requested(stop)) {
    if (Status s = measure_tool_run(bin_dir, model_path, *trial, next_run, settings.warmup, m); !s) {
      return fail("repetition {}: {}", m.repetitions + 1, s.error().message);
    }
    const std::vector<double> values = values_of(m.samples, m.main_metric);
    m.repetitions = static_cast<int>(values.size());
    const RepetitionDecision decision = next_repetition(values, rule);
    if (decision != RepetitionDecision::Continue) {
      m.ci_target_met = decision == RepetitionDecision::CiTargetMet;
      break;
    }
    next_run = 1;
  }
  return m;
}

Result<BuildRecord> llama_cpp_build_record(const fs::path& bin_dir) {
  const fs::path bench = bin_dir / "llama-bench";
  auto lines = version_lines(bench);
  if (!lines) return lines.error();
  auto hash = file_content_hash(bench.string());
  if (!hash) return hash.error();
  BuildRecord b;
  const std::string& version = lines->front();
  b.version = "llama.cpp " + (version.starts_with("version: ") ? version.substr(9) : version);
  b.git_commit = "llama-bench " + hash->substr(0, 16);
  for (const std::string& line : *lines) {
    if (line.starts_with("built with ")) b.compiler = line.substr(11);
  }
  b.build_type = "llama.cpp";
  b.flags = "";
  b.backends = "llama.cpp";
  b.kernel_variants = "";
  return b;
}

}  // namespace infertune
