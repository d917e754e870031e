#pragma once
// The host probe as JSON: what `infertune probe --json` prints and what the per-host cache file holds.
// Field names are stable; a reader rejects a document of another format or format_version.
//
// {"format": "infertune-host-probe", "format_version": 1, "fingerprint": "0123456789abcdef",
//  "measured_at": "2025-06-01T12:00:00Z", "measured_at_unix": 1748779200, "measure_seconds": 3.1,
//  "host": {"cpu": {"vendor", "model", "features": [..], "packages", "physical_cores", "hardware_threads"},
//           "caches": [{"level": "L1d", "size_bytes", "count"}, ..],
//           "numa_nodes": [{"os_index", "memory_bytes", "cpus": "0-7"}, ..], "memory_bytes",
//           "os": {"name", "release", "version", "machine"},
//           "gpus": [{"index", "name", "compute_major", "compute_minor", "memory_bytes", "pci_bus_id",
//                     "memory_bus_width_bits", "max_memory_clock_mhz", "theoretical_bandwidth_gbs" | null}, ..]},
//  "bandwidth": {"unit": "GB/s", "read_isa", "buffer_bytes",
//                "read_all_cores" | "read_one_core" | "triad_all_cores": {"threads", "repetitions", "best", "median"}},
//  "compute": {"f32_fma": {"unit": "GFLOP/s", "isa", "one_core": {..rate..}, "all_cores": {..rate..}},
//              "int8_dot": {"unit": "GOP/s", "isa", "one_core": {..}, "all_cores": {..}}},
//  "gpus": [{"index", "name", "pci_bus_id", "copy_bandwidth_gbs" | null, "f16_gemm_tflops" | null, "gemm_n",
//            "problem": "" or why a figure is null}, ..]}
//
// Version 2 added the GPUs' measured figures ("gpus") and NVML's memory interface (host.gpus[]); a cache
// file of an older version is measured again without a warning (probe_cache.cpp).
#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

#include "bench/probe/host_probe.h"
#include "kernels/result.h"

namespace infertune {

inline constexpr int kHostProbeFormatVersion = 2;

// Fields in the order documented above.
nlohmann::ordered_json host_probe_to_json(const HostProbe& probe);
// Pretty-printed JSON text (bytes that are not UTF-8 in OS-provided strings are replaced, never thrown).
std::string host_probe_to_text(const HostProbe& probe);

// Errors name the first field that is missing or of the wrong type.
Result<HostProbe> host_probe_from_json(const nlohmann::json& json);
Result<HostProbe> parse_host_probe(std::string_view text);

// "2025-06-01T12:00:00Z"
std::string utc_timestamp(int64_t unix_seconds);

}  // namespace infertune
