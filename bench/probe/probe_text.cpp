#include "bench/probe/probe_text.h"

#include <fmt/format.h>

#include <algorithm>

#include "bench/probe/probe_json.h"
#include "kernels/cuda/cuda_devices.h"

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
  return out;
}

std::string optional_text(const std::optional<double>& v, const char* unit) {
  return v ? fmt::format("{:8.1f} {}", *v, unit) : fmt::format("{:>8} {}", "-", unit);
}

// One GPU: what it is, its measured figures (null: none) and NVML's theoretical bandwidth, the ceiling the
// measured copy is a share of.
std::string gpu_text(const GpuInfo& g, const GpuFigures* f) {
  std::string out =
      fmt::format("\nGPU {}: {} (compute {}.{}, {}{})\n", g.index, g.name, g.compute_major, g.compute_minor,
                  size_text(g.memory_bytes), g.pci_bus_id.empty() ? "" : ", PCI " + g.pci_bus_id);
  // Assigned, not initialized from a conditional: GCC 12 then warned that its value "may be used uninitialized".
  std::optional<double> copy;
  if (f) copy = f->copy_bandwidth_gbs;
  std::string theoretical = "NVML theoretical: unknown (no NVML)";
  if (g.theoretical_bandwidth_gbs) {
    theoretical = fmt::format("NVML theoretical {:.1f} GB/s ({}-bit bus, {} MHz)", *g.theoretical_bandwidth_gbs,
                              g.memory_bus_width_bits, g.max_memory_clock_mhz);
    if (copy && *g.theoretical_bandwidth_gbs > 0) {
      theoretical += fmt::format(": {:.0f}%", 100.0 * *copy / *g.theoretical_bandwidth_gbs);
    }
  }
  out += fmt::format("  memory, copy (read + write)  {}; {}\n", optional_text(copy, "GB/s"), theoretical);
  out += fmt::format("  f16 GEMM (cuBLAS, f32 acc.)  {}{}\n",
                     optional_text(f ? f->f16_gemm_tflops : std::nullopt, "TFLOP/s"),
                     f && f->gemm_n > 0 ? fmt::format(" (n = {})", f->gemm_n) : "");
  if (!f) out += "  not measured\n";
  if (f && !f->problem.empty()) out += fmt::format("  not measured: {}\n", f->problem);
  return out;
}

std::string gpus_text(const HostProbe& p) {
  if (p.host.gpus.empty()) {
    return cuda_compiled() ? "\nGPUs: none visible\n" : "\nGPUs: none (this build has no CUDA backend)\n";
  }
  std::string out;
  for (const GpuInfo& gpu : p.host.gpus) {
    const auto f =
        std::find_if(p.gpus.begin(), p.gpus.end(), [&](const GpuFigures& f) { return figures_describe(f, gpu); });
    out += gpu_text(gpu, f == p.gpus.end() ? nullptr : &*f);
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
  out += gpus_text(p);
  out += fmt::format("\n{} {} ({:.1f} s of measurement)\n", from_cache ? "cached, measured at" : "measured at",
                     utc_timestamp(p.measured_at_unix), p.measure_seconds);
  return out;
}

}  // namespace infertune
