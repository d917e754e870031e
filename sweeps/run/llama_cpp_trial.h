#pragma once
// A trial measured by llama.cpp's own benchmark tools instead of this engine (a sweep spec's `engine: llama.cpp`),
// so that the same sweep, store, statistics and recommendations serve users who stay on llama.cpp, and so that
// `compare` and `report` can put both engines side by side on identical configurations.
//
// The sweep worker runs it in place of the engine: pp and tg workloads (at any depth) through `llama-bench -o json`
// (each repetition's t/s from its samples_ts, the prompt's time as ttft_ms), batched workloads through
// `llama-batched-bench --output-format jsonl` (aggregate and prompt t/s), and served workloads through `llama-server`
// under the same users as this engine's server (sweeps/trial/served_load.h: the same per-request and per-run
// metrics). A trial's settings become the tools' flags (-t, -C, --cpu-strict, --poll, --numa, -ngl, -mg, -nkvo, -b,
// -ub, -ctk, -ctv, -fa, --repack, and for batched-bench and the server -c, -tb, -np); settings a tool has no flag
// for are said in the trial's warnings, never silently dropped. A tool that fails (or crashes) fails the trial with
// its exit status and last stderr lines; the runner's trial timeout covers it, as the tool runs in the worker's
// process group. The trial's peak RSS is the tool's (the largest of its runs; the server's while it served).
//
// Repetitions: llama-bench runs min_reps repetitions (after its own warmup, unless the sweep has none), then one
// more per run until the sweep's stopping rule (the 95% interval within ci_target, or max_reps) is met — each extra
// run reloads the model, as a new llama-bench process must. A pp+tg workload is not measured: llama-bench reports
// it as one combined rate, which is not the pp and tg rates the store keeps.
#include <atomic>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/result.h"
#include "sweeps/store/store_records.h"
#include "sweeps/trial/trial_config.h"
#include "sweeps/trial/trial_executor.h"

namespace infertune {

// The tool and its arguments for `repetitions` timed runs of the trial (argv[0] is the tool's path).
struct LlamaCppInvocation {
  std::vector<std::string> argv;
  std::vector<std::string> warnings;  // settings the tool has no flag for
};
Result<LlamaCppInvocation> llama_cpp_invocation(const std::filesystem::path& bin_dir, const std::string& model_path,
                                                const TrialConfig& trial, int repetitions, bool warmup);

// Each tool the workloads need is in `bin_dir` and executable: llama-bench always (it names the build),
// llama-batched-bench for batched workloads, llama-server for served ones. The error names what is missing.
Status check_llama_cpp_tools(const std::filesystem::path& bin_dir, const std::vector<Workload>& workloads);

// The samples of one tool run's output (repetitions numbered from `first_repetition`); errors name what is
// missing from the output.
Result<std::vector<Sample>> llama_bench_samples(const std::string& json_output, const Workload& workload,
                                                int64_t first_repetition);
Result<std::vector<Sample>> batched_bench_samples(const std::string& jsonl_output, const Workload& workload,
                                                  int64_t repetition);

Result<TrialMeasurement> run_llama_cpp_trial(const std::filesystem::path& bin_dir, const std::string& model_path,
                                             const nlohmann::json& config, const TrialSettings& settings,
                                             const std::atomic<bool>* stop = nullptr);

// The build row of a llama.cpp sweep: `llama-bench --version` (version, commit, compiler) and a hash of the binary
// (a source build without git reports "commit unknown": the hash still tells two builds apart).
Result<BuildRecord> llama_cpp_build_record(const std::filesystem::path& bin_dir);

}  // namespace infertune
