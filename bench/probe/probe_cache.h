#pragma once
// The host probe cached per host: $XDG_CACHE_HOME/infertune/host-<fingerprint>.json (else
// ~/.cache/infertune/...). A fresh file for the live host's fingerprint is reused instead of measuring;
// a stale, damaged or foreign one is replaced (damaged ones with a warning, never a failure).
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "bench/probe/host_probe.h"
#include "kernels/result.h"

namespace infertune {

// $XDG_CACHE_HOME/infertune when XDG_CACHE_HOME is set and absolute, else $HOME/.cache/infertune.
Result<std::filesystem::path> default_probe_cache_dir();

std::filesystem::path probe_cache_file(const std::filesystem::path& dir, const std::string& fingerprint);

// Writes atomically (a temporary file renamed over the old one), creating the directory.
Status save_host_probe(const std::filesystem::path& file, const HostProbe& probe);

struct ProbeCacheOptions {
  std::filesystem::path dir;  // empty: no cache (measure, save nothing)
  std::chrono::seconds max_age = std::chrono::hours(24 * 7);
  bool refresh = false;  // measure even when a fresh file exists
  int64_t now_unix = 0;  // the current time, seconds since the epoch
};

struct LoadedProbe {
  HostProbe probe;
  bool from_cache = false;
  std::vector<std::string> warnings;  // a damaged cache file, a cache that could not be written
};

using MeasureProbe = std::function<Result<HostProbe>(const HostTopology&)>;

// A reused probe keeps its measured figures but takes the live host description (OS release, GPUs and the
// memory figures may change without changing the fingerprint); it keeps the figures of the live GPUs only,
// and a live GPU without figures means measuring again. A file of an older format version is measured again
// silently. Errors only when measuring fails.
Result<LoadedProbe> load_or_measure_host_probe(const HostTopology& live, const ProbeCacheOptions& options,
                                               const MeasureProbe& measure);

// For bench and sweep: the live host, the default cache dir, a real measurement when needed; warnings go to
// stderr.
Result<HostProbe> load_or_measure_host_probe(bool refresh);

// The same with the warnings and the cache hit reported to the caller (what `infertune probe` shows).
Result<LoadedProbe> load_or_measure_host_probe_default(bool refresh);

}  // namespace infertune
