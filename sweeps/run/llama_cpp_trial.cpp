#include "sweeps/run/llama_cpp_trial.h"

#include <fmt/format.h>

#include <chrono>
#include <span>

#include "engine/context/flash_attention.h"
#include "engine/gpu/gpu_memory.h"
#include "kernels/ggml_type.h"
#include "sweeps/run/worker_exit.h"
#include "sweeps/run/worker_process.h"
#include "sweeps/store/metric_names.h"
#include "sweeps/store/stable_hash.h"
#include "sweeps/trial/repetition_control.h"

namespace infertune {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr std::chrono::seconds kToolDeadline = std::chrono::hours(24);  // the runner's trial timeout is the real limit
constexpr int kBatchedBenchAttempts = 10;

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
  if (!s.repack) warnings.push_back("--repack 0: llama-batched-bench has no such flag; weights were repacked");
}

struct ToolRun {
  std::string output;                    // stdout
  std::vector<std::string> stderr_tail;  // its last lines
};

// Runs the tool to its end (waiting at most `patience` for each line of output); a non-zero exit or a signal is
// an error with the tool's last stderr lines.
Result<ToolRun> run_tool(const std::vector<std::string>& argv, std::chrono::seconds patience = kToolDeadline) {
  WorkerCommand command;
  command.executable = argv.front();
  command.arguments.assign(argv.begin() + 1, argv.end());
  auto process = WorkerProcess::start(command);
  if (!process) return process.error();
  process->close_input();
  ToolRun run;
  for (;;) {
    WorkerProcess::Line line = process->next_line(WorkerProcess::Clock::now() + patience);
    if (line.state != WorkerProcess::LineState::line) break;
    run.output += line.text + "\n";
  }
  const WorkerExit exit = process->finish(5000ms);
  run.stderr_tail = process->stderr_tail();
  if (!exit.exited || exit.exit_code != 0) {
    return fail("{} {}{}", fs::path(argv.front()).filename().string(), exit.describe(),
                stderr_suffix(run.stderr_tail, 8));
  }
  return run;
}

Result<std::vector<Sample>> measured_samples(const fs::path& bin_dir, const std::string& model_path,
                                             const TrialConfig& trial, int repetitions, bool warmup,
                                             int64_t first_repetition, std::vector<std::string>& warnings) {
  auto invocation = llama_cpp_invocation(bin_dir, model_path, trial, repetitions, warmup);
  if (!invocation) return invocation.error();
  if (warnings.empty()) warnings = invocation->warnings;
  if (trial.workload.kind != WorkloadKind::Batched) {
    auto run = run_tool(invocation->argv);
    if (!run) return run.error();
    return llama_bench_samples(run->output, trial.workload, first_repetition);
  }
  // llama-batched-bench prints its rows through llama.cpp's logger, whose thread a quick exit sometimes cuts off
  // (one run in four or five here prints nothing at all): a run without its row is run again.
  Result<std::vector<Sample>> samples = fail("not run");
  for (int attempt = 0; attempt < kBatchedBenchAttempts; ++attempt) {
    auto run = run_tool(invocation->argv);
    if (!run) return run.error();
    samples = batched_bench_samples(run->output, trial.workload, first_repetition);
    if (samples) break;
  }
  return samples;
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
      add(out.argv, "-npp", std::to_string(w.n_prompt));
      add(out.argv, "-ntg", std::to_string(w.n_gen));
      add(out.argv, "-npl", std::to_string(w.n_parallel));
      batched_bench_flags(trial.settings, w, out.argv, out.warnings);
      return out;
    case WorkloadKind::PromptGenerate:
      return fail(
          "{}: llama-bench measures a prompt then generation as one combined rate, not the pp and tg rates "
          "the store keeps; sweep pp and tg workloads for llama.cpp",
          w.name());
    case WorkloadKind::Serve:
      return fail("{}: served workloads are not measured for llama.cpp (llama-server under loadgen) yet", w.name());
  }
  return fail("unknown workload kind");
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
  TrialMeasurement m;
  m.main_metric = main_metric_of(trial->workload);
  const RepetitionRule rule{
      .min_reps = settings.min_reps, .max_reps = settings.max_reps, .ci_target = settings.ci_target};
  // llama-batched-bench has no repetitions of its own: one run per repetition.
  const bool batched = trial->workload.kind == WorkloadKind::Batched;
  int next_run = batched ? 1 : settings.min_reps;
  while (!trial_stop_requested(stop)) {
    auto samples = measured_samples(bin_dir, model_path, *trial, next_run, settings.warmup, m.repetitions, m.warnings);
    if (!samples) return fail("repetition {}: {}", m.repetitions + 1, samples.error().message);
    m.samples.insert(m.samples.end(), samples->begin(), samples->end());
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
