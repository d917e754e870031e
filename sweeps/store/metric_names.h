#pragma once
// The metric names samples and summaries are stored under (DESIGN.md, "Metrics"). The trial_summary view
// and the export read these names, so they are part of the store's format: never rename one.
namespace infertune::metric {

inline constexpr const char* kPromptTokensPerSecond = "pp_tps";            // prompt tokens / evaluation time
inline constexpr const char* kGenTokensPerSecond = "tg_tps";               // generated tokens / time
inline constexpr const char* kTimeToFirstTokenMs = "ttft_ms";              // request arrival -> first token
inline constexpr const char* kInterTokenLatencyMs = "itl_ms";              // one sample per gap between tokens
inline constexpr const char* kEndToEndLatencyMs = "e2e_ms";                // request arrival -> last token
inline constexpr const char* kAggregateTokensPerSecond = "aggregate_tps";  // all sequences' tokens / wall time
inline constexpr const char* kModelLoadMs = "load_ms";

// Per repetition of a served workload (the server and loadgen's clients, sweeps/trial/workload_serve.cpp):
// completed requests per second, and those that met the workload's objective (time to first token, mean time
// per output token) per second.
inline constexpr const char* kRequestsPerSecond = "request_rps";
inline constexpr const char* kGoodputPerSecond = "goodput_rps";

// Per repetition of a trial that generates tokens: bytes of weights read per decode step x steps per second
// (one step reads every weight once, whatever its number of sequences), and that as a percentage of the
// host's measured all-core read bandwidth. Once per trial: the KV cache's bytes for the context's cells.
inline constexpr const char* kWeightReadGBs = "weight_read_gbs";
inline constexpr const char* kBandwidthPercent = "bandwidth_pct";
inline constexpr const char* kKvBytes = "kv_bytes";

// Utilization per repetition (sweeps/metrics): the mean CPU busy share of the thread pool's workers (CPU time
// / wall time, 0..1), and the process's hardware counters when the kernel permits perf_event_open (absent,
// not zero, otherwise); ipc = instructions / cycles.
inline constexpr const char* kCpuBusyShare = "cpu_busy_share";
inline constexpr const char* kInstructions = "instructions";
inline constexpr const char* kCycles = "cycles";
inline constexpr const char* kLlcMisses = "llc_misses";
inline constexpr const char* kInstructionsPerCycle = "ipc";

// GPU utilization per repetition (sweeps/metrics/gpu_sampler.h), recorded only when the trial offloads layers
// (n_gpu_layers != 0) and NVML answers (absent, not zero, otherwise): the main GPU's mean busy percentage
// (0..100: the share of time a kernel ran), the peak device memory in use in bytes (every process's: NVML
// does not attribute it), and the mean memory clock in MHz (below the maximum: idle or throttled memory).
inline constexpr const char* kGpuBusyPercent = "gpu_busy_pct";
inline constexpr const char* kGpuVramPeakBytes = "gpu_vram_peak_bytes";
inline constexpr const char* kGpuMemoryClockMhz = "gpu_mem_clock_mhz";

}  // namespace infertune::metric
