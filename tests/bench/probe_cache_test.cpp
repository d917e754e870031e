// The per-host probe cache, with a stand-in measurement and a cache dir under the test's temp dir: a fresh
// file is reused, a stale one re-measured, --refresh always measures, and a damaged file is replaced with
// a warning, never a failure.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <optional>

#include "bench/probe/host_fingerprint.h"
#include "bench/probe/probe_cache.h"
#include "bench/probe/probe_json.h"
#include "probe_sample.h"
#include "test_support.h"

namespace infertune {
namespace {

constexpr int64_t kNow = 1750000000;
constexpr int64_t kDay = 24 * 3600;

std::string read_text(const std::filesystem::path& path) {
  const auto bytes = test::read_file_bytes(path);
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

HostTopology fake_topology() {
  HostTopology t;
  t.info = test::sample_host_info();
  t.core_cpus = {0, 1};
  return t;
}

// Counts calls and returns the sample figures, stamped like a real measurement.
struct FakeMeasure {
  int calls = 0;
  int64_t measured_at = kNow;
  MeasureProbe fn() {
    return [this](const HostTopology& t) -> Result<HostProbe> {
      ++calls;
      HostProbe p = test::sample_probe();
      p.host = t.info;
      p.fingerprint = host_fingerprint(t.info);
      p.measured_at_unix = measured_at;
      p.bandwidth.read_all_cores.best += calls;         // tells one measurement from another
      std::erase_if(p.gpus, [&](const GpuFigures& f) {  // figures of the GPUs measured only
        return std::none_of(t.info.gpus.begin(), t.info.gpus.end(), [&](const GpuInfo& g) { return g.name == f.name; });
      });
      return p;
    };
  }
};

class ProbeCache : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.dir = test::temp_dir() / "cache" / "infertune";
    options_.now_unix = kNow;
  }
  std::filesystem::path file() const { return probe_cache_file(options_.dir, host_fingerprint(topology_.info)); }
  Result<LoadedProbe> load() { return load_or_measure_host_probe(topology_, options_, measure_.fn()); }
  void write_file(const std::string& bytes) {
    std::filesystem::create_directories(options_.dir);
    std::ofstream(file(), std::ios::binary) << bytes;
  }
  void write_probe_measured_at(int64_t when) {
    HostProbe p = test::sample_probe();
    p.host = topology_.info;
    p.fingerprint = host_fingerprint(topology_.info);
    p.measured_at_unix = when;
    ASSERT_TRUE(save_host_probe(file(), p));
  }

  HostTopology topology_ = fake_topology();
  ProbeCacheOptions options_;
  FakeMeasure measure_;
};

TEST_F(ProbeCache, MeasuresOnceThenReusesTheFile) {
  auto first = load();
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_FALSE(first->from_cache);
  EXPECT_TRUE(first->warnings.empty());
  EXPECT_EQ(measure_.calls, 1);
  ASSERT_TRUE(std::filesystem::exists(file()));
  EXPECT_EQ(file().filename().string(), "host-" + host_fingerprint(topology_.info) + ".json");

  options_.now_unix = kNow + 6 * kDay;
  auto second = load();
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_TRUE(second->from_cache);
  EXPECT_EQ(measure_.calls, 1);
  EXPECT_EQ(second->probe, first->probe);
}

TEST_F(ProbeCache, StaleFileIsMeasuredAgainAndReplaced) {
  write_probe_measured_at(kNow - 8 * kDay);
  auto loaded = load();
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_FALSE(loaded->from_cache);
  EXPECT_TRUE(loaded->warnings.empty());  // old is not damaged
  EXPECT_EQ(measure_.calls, 1);
  auto rewritten = parse_host_probe(read_text(file()));
  ASSERT_TRUE(rewritten) << rewritten.error().message;
  EXPECT_EQ(rewritten->measured_at_unix, kNow);
}

TEST_F(ProbeCache, MaxAgeIsConfigurable) {
  write_probe_measured_at(kNow - 2 * kDay);
  options_.max_age = std::chrono::hours(24);
  auto loaded = load();
  ASSERT_TRUE(loaded);
  EXPECT_FALSE(loaded->from_cache);
  EXPECT_EQ(measure_.calls, 1);
}

TEST_F(ProbeCache, FileDatedInTheFutureIsNotTrusted) {
  write_probe_measured_at(kNow + 2 * kDay);
  auto loaded = load();
  ASSERT_TRUE(loaded);
  EXPECT_FALSE(loaded->from_cache);
  EXPECT_EQ(measure_.calls, 1);
}

TEST_F(ProbeCache, RefreshMeasuresEvenWhenFresh) {
  write_probe_measured_at(kNow - 60);
  options_.refresh = true;
  auto loaded = load();
  ASSERT_TRUE(loaded);
  EXPECT_FALSE(loaded->from_cache);
  EXPECT_EQ(measure_.calls, 1);
  options_.refresh = false;
  auto again = load();
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->from_cache);
  EXPECT_EQ(again->probe, loaded->probe);  // the refreshed figures were saved
}

TEST_F(ProbeCache, DamagedFilesAreIgnoredWithAWarningAndReplaced) {
  const std::string valid = host_probe_to_text(test::sample_probe());
  const std::vector<std::pair<const char*, std::string>> damaged = {
      {"empty", ""},
      {"binary garbage", std::string("\x00\xff\x13\x37 not json", 14)},
      {"truncated", valid.substr(0, valid.size() / 2)},
      {"wrong type", R"({"format": "infertune-host-probe", "format_version": )" +
                         std::to_string(kHostProbeFormatVersion) + R"(, "fingerprint": 12})"},
      {"json array", "[1, 2, 3]"},
  };
  for (const auto& [name, bytes] : damaged) {
    SCOPED_TRACE(name);
    measure_.calls = 0;
    write_file(bytes);
    auto loaded = load();
    ASSERT_TRUE(loaded) << loaded.error().message;
    EXPECT_FALSE(loaded->from_cache);
    EXPECT_EQ(measure_.calls, 1);
    ASSERT_EQ(loaded->warnings.size(), 1u);
    EXPECT_NE(loaded->warnings[0].find(file().string()), std::string::npos) << loaded->warnings[0];
    // The replacement is a valid, reusable cache file.
    auto reused = load();
    ASSERT_TRUE(reused);
    EXPECT_TRUE(reused->from_cache);
    EXPECT_EQ(measure_.calls, 1);
  }
}

TEST_F(ProbeCache, FileOfAnotherHostIsIgnoredWithAWarning) {
  HostProbe foreign = test::sample_probe();
  foreign.measured_at_unix = kNow;
  foreign.fingerprint = "ffffffffffffffff";
  ASSERT_TRUE(save_host_probe(file(), foreign));
  auto loaded = load();
  ASSERT_TRUE(loaded);
  EXPECT_FALSE(loaded->from_cache);
  EXPECT_EQ(measure_.calls, 1);
  ASSERT_EQ(loaded->warnings.size(), 1u);
  EXPECT_NE(loaded->warnings[0].find("ffffffffffffffff"), std::string::npos);
}

TEST_F(ProbeCache, UnwritableCacheWarnsButStillReturnsTheMeasurement) {
  std::filesystem::create_directories(file());  // a directory where the file should be
  auto loaded = load();
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_EQ(measure_.calls, 1);
  EXPECT_EQ(loaded->warnings.size(), 2u);  // the unreadable file, then the failed save
  EXPECT_EQ(loaded->probe.bandwidth.read_all_cores.best, test::sample_probe().bandwidth.read_all_cores.best + 1);
}

TEST_F(ProbeCache, NoCacheDirMeansMeasureEveryTimeAndWriteNothing) {
  options_.dir.clear();
  ASSERT_TRUE(load());
  ASSERT_TRUE(load());
  EXPECT_EQ(measure_.calls, 2);
}

TEST_F(ProbeCache, ReuseTakesTheLiveHostDescription) {
  ASSERT_TRUE(load());
  topology_.info.gpus.clear();  // e.g. CUDA_VISIBLE_DEVICES changed; the fingerprint did not
  topology_.info.os.release = "7.0.0";
  auto loaded = load();
  ASSERT_TRUE(loaded);
  EXPECT_TRUE(loaded->from_cache);
  EXPECT_TRUE(loaded->probe.host.gpus.empty());
  EXPECT_TRUE(loaded->probe.gpus.empty());  // the figures of GPUs no longer visible are dropped
  EXPECT_EQ(loaded->probe.host.os.release, "7.0.0");
  EXPECT_EQ(measure_.calls, 1);
  EXPECT_EQ(loaded->probe.bandwidth.read_all_cores.best, test::sample_probe().bandwidth.read_all_cores.best + 1);
}

TEST_F(ProbeCache, AFileOfAnOlderFormatVersionIsMeasuredAgainWithoutAWarning) {
  nlohmann::json old = nlohmann::json::parse(host_probe_to_text(test::sample_probe()));
  old["format_version"] = kHostProbeFormatVersion - 1;
  old["fingerprint"] = host_fingerprint(topology_.info);
  old["measured_at_unix"] = kNow;
  old.erase("gpus");  // version 1 had no GPU figures
  write_file(old.dump());
  auto loaded = load();
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_FALSE(loaded->from_cache);
  EXPECT_TRUE(loaded->warnings.empty()) << loaded->warnings[0];
  EXPECT_EQ(measure_.calls, 1);
  auto rewritten = parse_host_probe(read_text(file()));
  ASSERT_TRUE(rewritten) << rewritten.error().message;
}

// The GPU figures are measured per GPU: a GPU that becomes visible after the cache was written is measured
// (and so is everything else: one probe, one time), one that disappears loses its figures, and one whose
// CUDA index moved (CUDA_VISIBLE_DEVICES) keeps its figures under its new index.
TEST_F(ProbeCache, ReuseNeedsFiguresForEveryLiveGpu) {
  const std::vector<GpuInfo> both = topology_.info.gpus;
  topology_.info.gpus = {both[0]};
  ASSERT_TRUE(load());  // measured with the H100 only
  topology_.info.gpus = both;
  auto added = load();
  ASSERT_TRUE(added);
  EXPECT_FALSE(added->from_cache);
  EXPECT_EQ(measure_.calls, 2);

  topology_.info.gpus = {both[1]};
  topology_.info.gpus[0].index = 0;  // the A10 alone, now CUDA device 0
  auto moved = load();
  ASSERT_TRUE(moved);
  EXPECT_TRUE(moved->from_cache);
  EXPECT_EQ(measure_.calls, 2);
  ASSERT_EQ(moved->probe.gpus.size(), 1u);
  EXPECT_EQ(moved->probe.gpus[0].name, "NVIDIA A10");
  EXPECT_EQ(moved->probe.gpus[0].index, 0);
  EXPECT_EQ(moved->probe.gpus[0].copy_bandwidth_gbs, test::sample_probe().gpus[1].copy_bandwidth_gbs);
}

TEST_F(ProbeCache, AnotherHostGetsItsOwnFile) {
  ASSERT_TRUE(load());
  topology_.info.physical_cores += 1;
  auto loaded = load();
  ASSERT_TRUE(loaded);
  EXPECT_FALSE(loaded->from_cache);
  EXPECT_EQ(measure_.calls, 2);
  size_t files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(options_.dir)) ++files;
  EXPECT_EQ(files, 2u);
}

TEST_F(ProbeCache, FailedMeasurementIsAnErrorAndWritesNothing) {
  auto loaded = load_or_measure_host_probe(topology_, options_,
                                           [](const HostTopology&) -> Result<HostProbe> { return fail("no luck"); });
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().message, "no luck");
  EXPECT_FALSE(std::filesystem::exists(file()));
}

// Sets an environment variable for one test and restores it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    value ? setenv(name, value, 1) : unsetenv(name);
  }
  ~ScopedEnv() { old_ ? setenv(name_, old_->c_str(), 1) : unsetenv(name_); }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(ProbeCacheDir, FollowsXdgCacheHomeThenHome) {
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "/var/tmp/xdg");
    ScopedEnv home("HOME", "/home/someone");
    EXPECT_EQ(default_probe_cache_dir().value(), "/var/tmp/xdg/infertune");
  }
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "relative/ignored");  // the XDG spec: relative paths are invalid
    ScopedEnv home("HOME", "/home/someone");
    EXPECT_EQ(default_probe_cache_dir().value(), "/home/someone/.cache/infertune");
  }
  {
    ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
    ScopedEnv home("HOME", nullptr);
    EXPECT_FALSE(default_probe_cache_dir());
  }
}

// The memory figures move while a machine runs; the fingerprint ignores them, so the cache still hits and
// the reused probe shows the live figures.
TEST_F(ProbeCache, MemoryDriftStillReusesTheFile) {
  ASSERT_TRUE(load());
  topology_.info.memory_bytes -= 4096;
  topology_.info.numa_nodes[0].memory_bytes += 64ull << 20;
  auto loaded = load();
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_TRUE(loaded->from_cache);
  EXPECT_TRUE(loaded->warnings.empty());
  EXPECT_EQ(measure_.calls, 1);
  EXPECT_EQ(loaded->probe.host.memory_bytes, topology_.info.memory_bytes);
  EXPECT_EQ(loaded->probe.host.numa_nodes[0].memory_bytes, topology_.info.numa_nodes[0].memory_bytes);
}

// A cache written under an earlier fingerprint formula has another file name: it is simply not found, the
// host is measured once more without a warning, and the old file is left as it was.
TEST_F(ProbeCache, AFileFromAnEarlierFingerprintFormulaIsIgnoredQuietly) {
  HostProbe old = test::sample_probe();
  old.host = topology_.info;
  old.fingerprint = "00000000deadbeef";
  old.measured_at_unix = kNow;
  const auto old_file = probe_cache_file(options_.dir, old.fingerprint);
  ASSERT_TRUE(save_host_probe(old_file, old));
  const std::string old_bytes = read_text(old_file);

  auto loaded = load();
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_FALSE(loaded->from_cache);
  EXPECT_TRUE(loaded->warnings.empty());
  EXPECT_EQ(measure_.calls, 1);
  EXPECT_EQ(read_text(old_file), old_bytes);
  auto again = load();
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->from_cache);
  EXPECT_EQ(measure_.calls, 1);
}

}  // namespace
}  // namespace infertune
