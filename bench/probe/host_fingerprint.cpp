#include "bench/probe/host_fingerprint.h"

#include <fmt/format.h>

#include <cstdint>

namespace infertune {
namespace {

// RAM is compared in 64 MiB units: the kernel's MemTotal moves by a few MiB across kernel versions and
// boot options, while a real change (a DIMM, a VM resize) is far larger.
constexpr int kMemoryUnitShift = 26;

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
    numa += fmt::format("{}{}:{}:{}", numa.empty() ? "" : "|", node.os_index, node.memory_bytes >> kMemoryUnitShift,
                        node.cpus);
  }
  return fmt::format("vendor={};model={};features={};packages={};cores={};threads={};ram64m={};numa={}",
                     host.cpu_vendor, host.cpu_model, features, host.packages, host.physical_cores,
                     host.hardware_threads, host.memory_bytes >> kMemoryUnitShift, numa);
}

std::string host_fingerprint(const HostInfo& host) {
  return fmt::format("{:016x}", fnv1a64(host_fingerprint_text(host)));
}

}  // namespace infertune
