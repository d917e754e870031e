#include "bench/probe/host_fingerprint.h"

#include <fmt/format.h>

#include <cstdint>

namespace infertune {
namespace {

// Why no memory figure is hashed: the total RAM (sysconf) and each NUMA node's local memory (hwloc) are
// what the kernel reports at the moment of reading, and they move while the machine runs (memory hotplug,
// balloon drivers, huge-page pools taken from a node, crash-kernel and firmware reservations after an
// update). Rounding does not make them stable: any unit has boundaries, and a figure that sits near one
// flips between two reads, giving one host two fingerprints (the probe cache missed, the store split the
// host in two). Memory bandwidth is decided by the CPU and its memory channels, which the CPU model and
// the NUMA layout already identify; the sizes are still recorded (the probe JSON, the hosts row) and
// refreshed each time the host is seen.
//
// The text names its formula: comparing two texts (when a cache file is not found) then tells a formula
// change from a host change.
constexpr const char* kFormulaVersion = "v2";

uint64_t fnv1a64(const std::string& text) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (const unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

}  // namespace

std::string host_fingerprint_text(const HostInfo& host) {
  std::string features;
  for (const auto& f : host.cpu_features) features += (features.empty() ? "" : ",") + f;
  std::string numa;
  for (const auto& node : host.numa_nodes) {
    numa += fmt::format("{}{}:{}", numa.empty() ? "" : "|", node.os_index, node.cpus);
  }
  return fmt::format("{};vendor={};model={};features={};packages={};cores={};threads={};numa={}", kFormulaVersion,
                     host.cpu_vendor, host.cpu_model, features, host.packages, host.physical_cores,
                     host.hardware_threads, numa);
}

std::string host_fingerprint(const HostInfo& host) {
  return fmt::format("{:016x}", fnv1a64(host_fingerprint_text(host)));
}

}  // namespace infertune
