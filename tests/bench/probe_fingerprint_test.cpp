// The host fingerprint: the same for the same host on every read, different when anything that decides
// the roofline figures changes, and blind (by design) to what does not.
#include <gtest/gtest.h>

#include <functional>
#include <set>

#include "bench/probe/host_fingerprint.h"
#include "probe_sample.h"

namespace infertune {
namespace {

TEST(HostFingerprint, StableAcrossReadsOfTheLiveHost) {
  auto first = read_host_topology();
  auto second = read_host_topology();
  ASSERT_TRUE(first) << first.error().message;
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_EQ(host_fingerprint(first->info), host_fingerprint(second->info));
  EXPECT_EQ(host_fingerprint(first->info), host_fingerprint(first->info));
}

TEST(HostFingerprint, IsSixteenLowercaseHexDigits) {
  const std::string fp = host_fingerprint(test::sample_host_info());
  ASSERT_EQ(fp.size(), 16u);
  for (char c : fp) EXPECT_TRUE((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) << fp;
}

TEST(HostFingerprint, ChangesWhenAnIdentifyingFieldChanges) {
  const HostInfo base = test::sample_host_info();
  const std::vector<std::pair<const char*, std::function<void(HostInfo&)>>> changes = {
      {"vendor", [](HostInfo& h) { h.cpu_vendor = "AuthenticAMD"; }},
      {"model", [](HostInfo& h) { h.cpu_model += " v2"; }},
      {"a feature less", [](HostInfo& h) { h.cpu_features.pop_back(); }},
      {"a feature more", [](HostInfo& h) { h.cpu_features.push_back("avx512-vnni"); }},
      {"packages", [](HostInfo& h) { h.packages = 1; }},
      {"cores", [](HostInfo& h) { h.physical_cores -= 1; }},
      {"threads", [](HostInfo& h) { h.hardware_threads = h.physical_cores; }},
      {"ram", [](HostInfo& h) { h.memory_bytes += 1ull << 30; }},
      {"numa node count", [](HostInfo& h) { h.numa_nodes.pop_back(); }},
      {"numa node memory", [](HostInfo& h) { h.numa_nodes[1].memory_bytes -= 4ull << 30; }},
      {"numa node cpus", [](HostInfo& h) { h.numa_nodes[0].cpus = "0-55"; }},
      {"numa node index", [](HostInfo& h) { h.numa_nodes[1].os_index = 3; }},
  };
  std::set<std::string> seen = {host_fingerprint(base)};
  for (const auto& [name, change] : changes) {
    HostInfo changed = base;
    change(changed);
    const std::string fp = host_fingerprint(changed);
    EXPECT_NE(fp, host_fingerprint(base)) << name;
    EXPECT_TRUE(seen.insert(fp).second) << name << " collides with another change";
  }
}

TEST(HostFingerprint, IgnoresWhatDoesNotChangeCpuFigures) {
  const HostInfo base = test::sample_host_info();
  HostInfo changed = base;
  changed.os.release = "6.12.0";
  changed.gpus.clear();
  changed.memory_bytes += 3ull << 20;  // MemTotal drifting by a few MiB across kernel versions
  EXPECT_EQ(host_fingerprint(changed), host_fingerprint(base)) << host_fingerprint_text(changed);
}

}  // namespace
}  // namespace infertune
