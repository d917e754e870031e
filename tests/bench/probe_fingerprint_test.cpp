// The host fingerprint: the same for the same host on every read, different when anything that decides
// the roofline figures changes, and blind (by design) to what does not -- including the memory figures,
// which drift while a machine runs.
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
      {"numa node count", [](HostInfo& h) { h.numa_nodes.pop_back(); }},
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

// What a running machine's memory figures do between two reads (the probe's, then a test's or the next
// command's): page-cache and balloon accounting, huge pages taken from a node, hotplug, a crash kernel
// reservation after an update. None of it may give the host a second fingerprint.
TEST(HostFingerprint, MemoryFiguresDriftingDoNotChangeIt) {
  constexpr uint64_t kMiB = 1ull << 20;
  constexpr uint64_t kGiB = 1ull << 30;
  // Just below a 64 MiB boundary, where the old formula (RAM in 64 MiB units) flipped on a 4 KiB change.
  constexpr uint64_t kBelowBoundary = (8 * kGiB) - 4096;
  const std::vector<std::pair<const char*, std::function<void(HostInfo&)>>> drifts = {
      {"total RAM one page up, across a 64 MiB boundary", [](HostInfo& h) { h.memory_bytes = kBelowBoundary + 8192; }},
      {"total RAM one page down", [](HostInfo& h) { h.memory_bytes = kBelowBoundary - 4096; }},
      {"total RAM by a few MiB", [](HostInfo& h) { h.memory_bytes += 3 * kMiB; }},
      {"total RAM by a crash kernel's 256 MiB", [](HostInfo& h) { h.memory_bytes -= 256 * kMiB; }},
      {"total RAM by a balloon's 2 GiB", [](HostInfo& h) { h.memory_bytes -= 2 * kGiB; }},
      {"total RAM unknown", [](HostInfo& h) { h.memory_bytes = 0; }},
      {"node memory across a 64 MiB boundary",
       [](HostInfo& h) { h.numa_nodes[0].memory_bytes = kBelowBoundary + 8192; }},
      {"node memory by huge pages", [](HostInfo& h) { h.numa_nodes[1].memory_bytes -= 1 * kGiB; }},
      {"node memory by a hotplugged block", [](HostInfo& h) { h.numa_nodes[0].memory_bytes += 128 * kMiB; }},
      {"node memory unknown", [](HostInfo& h) { h.numa_nodes[1].memory_bytes = 0; }},
  };
  HostInfo base = test::sample_host_info();
  base.memory_bytes = kBelowBoundary;
  base.numa_nodes[0].memory_bytes = kBelowBoundary;
  const std::string fingerprint = host_fingerprint(base);
  HostInfo all = base;
  for (const auto& [name, drift] : drifts) {
    HostInfo drifted = base;
    drift(drifted);
    drift(all);
    EXPECT_EQ(host_fingerprint(drifted), fingerprint) << name << "\n" << host_fingerprint_text(drifted);
  }
  EXPECT_EQ(host_fingerprint(all), fingerprint) << "every drift at once";
}

TEST(HostFingerprint, ARealChangeStillChangesItDespiteMemoryDrift) {
  HostInfo base = test::sample_host_info();
  const std::vector<std::pair<const char*, std::function<void(HostInfo&)>>> changes = {
      {"a core less", [](HostInfo& h) { h.physical_cores -= 1; }},
      {"another CPU model", [](HostInfo& h) { h.cpu_model = "AMD EPYC 9654 96-Core Processor"; }},
      {"a node's CPUs", [](HostInfo& h) { h.numa_nodes[1].cpus = "56-110,168-223"; }},
  };
  for (const auto& [name, change] : changes) {
    HostInfo changed = base;
    change(changed);
    changed.memory_bytes += 4096;  // and some drift, which must not mask the change
    EXPECT_NE(host_fingerprint(changed), host_fingerprint(base)) << name;
  }
}

TEST(HostFingerprint, TextNamesItsFormulaAndNoMemoryFigure) {
  const std::string text = host_fingerprint_text(test::sample_host_info());
  EXPECT_EQ(text.rfind("v2;", 0), 0u) << text;
  EXPECT_EQ(text.find(std::to_string(test::sample_host_info().memory_bytes)), std::string::npos) << text;
  EXPECT_EQ(text.find("ram"), std::string::npos) << text;
  EXPECT_NE(text.find("numa=0:0-55,112-167|1:56-111,168-223"), std::string::npos) << text;
}

}  // namespace
}  // namespace infertune
