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

}  // namespace infertune::metric
