#include "bench/probe/probe_text.h"

#include <fmt/format.h>

#include "bench/probe/probe_json.h"

namespace infertune {
namespace {

std::string size_text(uint64_t bytes) {
  if (bytes >= (1ull << 30) && bytes % (1ull << 30) == 0) return fmt::format("{} GiB", bytes >> 30);
  if (bytes >= (1ull << 30)) return fmt::format("{:.1f} GiB", bytes / double(1ull << 30));
  if (bytes >= (1ull << 20)) return fmt::format("{:g} MiB", bytes / double(1ull << 20));
  if (bytes >= (1ull << 10)) return fmt::format("{:g} KiB", bytes / double(1ull << 10));
  return fmt::format("{} B", bytes);
}

std::string rate_text(const Rate& r, const char* unit) {
  return fmt::format("{:8.1f} {} best, {:8.1f} median ({} thread{}, {} runs)", r.best, unit, r.median, r.threads,
                     r.threads == 1 ? "" : "s", r.repetitions);
}

std::string join(const std::vector<std::string>& items, const char* separator) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

std::string host_text(const HostInfo& h) {
  std::string out = fmt::format("cpu:        {} ({})\n", h.cpu_model, h.cpu_vendor);
  out += fmt::format("features:   {}\n", join(h.cpu_features, " "));
  out += fmt::format("cores:      {} physical, {} hardware threads, {} package{}\n", h.physical_cores,
                     h.hardware_threads, h.packages, h.packages == 1 ? "" : "s");
  std::vector<std::string> caches;
  for (const auto& c : h.caches) caches.push_back(fmt::format("{} {} x{}", c.level, size_text(c.size_bytes), c.count));
  out += fmt::format("caches:     {}\n", join(caches, ", "));
  out += fmt::format("memory:     {} RAM\n", size_text(h.memory_bytes));
  for (const auto& n : h.numa_nodes) {
    out += fmt::format("numa node {}: {} local memory, cpus {}\n", n.os_index, size_text(n.memory_bytes), n.cpus);
  }
  out += fmt::format("os:         {} {} ({})\n", h.os.name, h.os.release, h.os.machine);
  if (h.gpus.empty()) out += "gpus:       none\n";
  for (const auto& g : h.gpus) {
    out += fmt::format("gpu {}:      {} (compute {}.{}, {})\n", g.index, g.name, g.compute_major, g.compute_minor,
                       size_text(g.memory_bytes));
  }
  return out;
}

}  // namespace

std::string host_probe_report(const HostProbe& p, bool from_cache) {
  std::string out = fmt::format("host {}\n", p.fingerprint);
  out += host_text(p.host);
  const BandwidthFigures& b = p.bandwidth;
  out += fmt::format("\nmemory bandwidth ({} buffer, {} read kernel):\n", size_text(b.buffer_bytes), b.read_isa);
  out += fmt::format("  read, all cores   {}\n", rate_text(b.read_all_cores, "GB/s"));
  out += fmt::format("  read, one core    {}\n", rate_text(b.read_one_core, "GB/s"));
  out += fmt::format("  triad, all cores  {}\n", rate_text(b.triad_all_cores, "GB/s"));
  const ComputeFigures& c = p.compute;
  out += "\ncompute peak:\n";
  out += fmt::format("  f32 fma ({}), one core     {}\n", c.f32_isa, rate_text(c.f32_one_core, "GFLOP/s"));
  out += fmt::format("  f32 fma ({}), all cores    {}\n", c.f32_isa, rate_text(c.f32_all_cores, "GFLOP/s"));
  out += fmt::format("  int8 dot ({}), one core  {}\n", c.int8_isa, rate_text(c.int8_one_core, "GOP/s"));
  out += fmt::format("  int8 dot ({}), all cores {}\n", c.int8_isa, rate_text(c.int8_all_cores, "GOP/s"));
  out += fmt::format("\n{} {} ({:.1f} s of measurement)\n", from_cache ? "cached, measured at" : "measured at",
                     utc_timestamp(p.measured_at_unix), p.measure_seconds);
  return out;
}

}  // namespace infertune
