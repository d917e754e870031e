#include "bench/probe/probe_cache.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <system_error>

#include "bench/probe/host_fingerprint.h"
#include "bench/probe/probe_json.h"

namespace infertune {
namespace {

// A cache file dated further ahead than this was written under a wrong clock: not trusted as fresh.
constexpr int64_t kClockSkewSeconds = 300;

// Cache files are small; anything larger is not one of ours.
constexpr std::streamoff kMaxCacheFileBytes = 1 << 20;

enum class CacheRead { missing, usable, damaged };

struct CachedProbe {
  CacheRead state = CacheRead::missing;
  HostProbe probe;
  std::string problem;
};

// A probe of an older format_version (an earlier infertune measured fewer figures) is outdated, not damaged.
bool written_by_older_version(std::string_view text) {
  const auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return false;
  const auto version = json.find("format_version");
  return json.value("format", "") == "infertune-host-probe" && version != json.end() && version->is_number_integer() &&
         version->get<int64_t>() < kHostProbeFormatVersion;
}

CachedProbe read_cache_file(const std::filesystem::path& file) {
  CachedProbe out;
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return out;
  out.state = CacheRead::damaged;
  if (!std::filesystem::is_regular_file(file, ec)) {
    out.problem = "not a regular file";
    return out;
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    out.problem = "cannot be opened";
    return out;
  }
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0 || size > kMaxCacheFileBytes) {
    out.problem = fmt::format("has an implausible size ({} bytes)", static_cast<long long>(size));
    return out;
  }
  in.seekg(0);
  std::string text(static_cast<size_t>(size), '\0');
  in.read(text.data(), size);
  if (written_by_older_version(text)) {
    out.state = CacheRead::missing;  // not damaged: measured again and replaced, without a warning
    return out;
  }
  auto probe = parse_host_probe(text);
  if (!probe) {
    out.problem = probe.error().message;
    return out;
  }
  out.state = CacheRead::usable;
  out.probe = std::move(*probe);
  return out;
}

bool is_fresh(const HostProbe& probe, const ProbeCacheOptions& options) {
  const int64_t age = options.now_unix - probe.measured_at_unix;
  return age >= -kClockSkewSeconds && age <= options.max_age.count();
}

int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

Result<std::filesystem::path> default_probe_cache_dir() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && *xdg && std::filesystem::path(xdg).is_absolute()) return std::filesystem::path(xdg) / "infertune";
  const char* home = std::getenv("HOME");
  if (home && *home) return std::filesystem::path(home) / ".cache" / "infertune";
  return fail("neither XDG_CACHE_HOME nor HOME is set: the host probe cannot be cached");
}

std::filesystem::path probe_cache_file(const std::filesystem::path& dir, const std::string& fingerprint) {
  return dir / ("host-" + fingerprint + ".json");
}

Status save_host_probe(const std::filesystem::path& file, const HostProbe& probe) {
  std::error_code ec;
  std::filesystem::create_directories(file.parent_path(), ec);
  if (ec) return fail("cannot create {}: {}", file.parent_path().string(), ec.message());
  std::filesystem::path temp = file;
  temp += fmt::format(".tmp{}", static_cast<long>(getpid()));
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << host_probe_to_text(probe) << '\n';
    out.flush();
    if (!out) {
      std::filesystem::remove(temp, ec);
      return fail("cannot write {}", temp.string());
    }
  }
  std::filesystem::rename(temp, file, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(temp, ignored);
    return fail("cannot replace {}: {}", file.string(), ec.message());
  }
  return Status::success();
}

Result<LoadedProbe> load_or_measure_host_probe(const HostTopology& live, const ProbeCacheOptions& options,
                                               const MeasureProbe& measure) {
  LoadedProbe out;
  const std::string fingerprint = host_fingerprint(live.info);
  const std::filesystem::path file =
      options.dir.empty() ? std::filesystem::path{} : probe_cache_file(options.dir, fingerprint);

  if (!file.empty() && !options.refresh) {
    CachedProbe cached = read_cache_file(file);
    if (cached.state == CacheRead::damaged) {
      out.warnings.push_back(fmt::format("ignoring the cached host probe {}: {}", file.string(), cached.problem));
    } else if (cached.state == CacheRead::usable && cached.probe.fingerprint != fingerprint) {
      out.warnings.push_back(
          fmt::format("ignoring the cached host probe {}: it is for host {}", file.string(), cached.probe.fingerprint));
    } else if (cached.state == CacheRead::usable && is_fresh(cached.probe, options)) {
      // A GPU the cached probe did not measure (one added, or made visible, since) needs a measurement.
      if (auto gpus = figures_of_live_gpus(cached.probe.gpus, live.info.gpus)) {
        out.probe = std::move(cached.probe);
        out.probe.host = live.info;
        out.probe.gpus = std::move(*gpus);
        out.from_cache = true;
        return out;
      }
    }
  }

  auto measured = measure(live);
  if (!measured) return measured.error();
  out.probe = std::move(*measured);
  if (!file.empty()) {
    const Status saved = save_host_probe(file, out.probe);
    if (!saved) out.warnings.push_back("the host probe was not cached: " + saved.error().message);
  }
  return out;
}

Result<LoadedProbe> load_or_measure_host_probe_default(bool refresh) {
  auto live = read_host_topology();
  if (!live) return live.error();
  ProbeCacheOptions options;
  options.refresh = refresh;
  options.now_unix = unix_now();
  std::vector<std::string> warnings;
  if (auto dir = default_probe_cache_dir()) {
    options.dir = *dir;
  } else {
    warnings.push_back(dir.error().message);
  }
  // Measuring takes seconds: say so on stderr (stdout may be JSON being piped).
  const MeasureProbe measure = [](const HostTopology& topology) {
    fmt::print(stderr, "infertune: measuring this host's memory bandwidth and compute peak (a few seconds)\n");
    return measure_host_probe(topology);
  };
  auto loaded = load_or_measure_host_probe(*live, options, measure);
  if (loaded) loaded->warnings.insert(loaded->warnings.begin(), warnings.begin(), warnings.end());
  return loaded;
}

Result<HostProbe> load_or_measure_host_probe(bool refresh) {
  auto loaded = load_or_measure_host_probe_default(refresh);
  if (!loaded) return loaded.error();
  for (const auto& w : loaded->warnings) fmt::print(stderr, "infertune: warning: {}\n", w);
  return std::move(loaded->probe);
}

}  // namespace infertune
