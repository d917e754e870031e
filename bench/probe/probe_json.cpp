#include "bench/probe/probe_json.h"

#include <ctime>

#include "bench/probe/json_fields.h"

namespace infertune {
namespace {

constexpr const char* kFormatName = "infertune-host-probe";

nlohmann::ordered_json rate_json(const Rate& r) {
  return {{"threads", r.threads}, {"repetitions", r.repetitions}, {"best", r.best}, {"median", r.median}};
}

Rate read_rate(JsonFields fields) {
  Rate r;
  fields.get("threads", r.threads);
  fields.get("repetitions", r.repetitions);
  fields.get("best", r.best);
  fields.get("median", r.median);
  return r;
}

nlohmann::ordered_json optional_json(const std::optional<double>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json host_json(const HostInfo& h) {
  nlohmann::ordered_json caches = nlohmann::ordered_json::array();
  for (const auto& c : h.caches)
    caches.push_back({{"level", c.level}, {"size_bytes", c.size_bytes}, {"count", c.count}});
  nlohmann::ordered_json nodes = nlohmann::ordered_json::array();
  for (const auto& n : h.numa_nodes) {
    nodes.push_back({{"os_index", n.os_index}, {"memory_bytes", n.memory_bytes}, {"cpus", n.cpus}});
  }
  nlohmann::ordered_json gpus = nlohmann::ordered_json::array();
  for (const auto& g : h.gpus) {
    gpus.push_back({{"index", g.index},
                    {"name", g.name},
                    {"compute_major", g.compute_major},
                    {"compute_minor", g.compute_minor},
                    {"memory_bytes", g.memory_bytes},
                    {"pci_bus_id", g.pci_bus_id},
                    {"memory_bus_width_bits", g.memory_bus_width_bits},
                    {"max_memory_clock_mhz", g.max_memory_clock_mhz},
                    {"theoretical_bandwidth_gbs", optional_json(g.theoretical_bandwidth_gbs)}});
  }
  return {
      {"cpu",
       {{"vendor", h.cpu_vendor},
        {"model", h.cpu_model},
        {"features", h.cpu_features},
        {"packages", h.packages},
        {"physical_cores", h.physical_cores},
        {"hardware_threads", h.hardware_threads}}},
      {"caches", caches},
      {"numa_nodes", nodes},
      {"memory_bytes", h.memory_bytes},
      {"os", {{"name", h.os.name}, {"release", h.os.release}, {"version", h.os.version}, {"machine", h.os.machine}}},
      {"gpus", gpus}};
}

HostInfo read_host(JsonFields fields) {
  HostInfo h;
  JsonFields cpu = fields.object("cpu");
  cpu.get("vendor", h.cpu_vendor);
  cpu.get("model", h.cpu_model);
  cpu.get("features", h.cpu_features);
  cpu.get("packages", h.packages);
  cpu.get("physical_cores", h.physical_cores);
  cpu.get("hardware_threads", h.hardware_threads);
  for (JsonFields c : fields.objects("caches")) {
    HostCache& cache = h.caches.emplace_back();
    c.get("level", cache.level);
    c.get("size_bytes", cache.size_bytes);
    c.get("count", cache.count);
  }
  for (JsonFields n : fields.objects("numa_nodes")) {
    HostNumaNode& node = h.numa_nodes.emplace_back();
    n.get("os_index", node.os_index);
    n.get("memory_bytes", node.memory_bytes);
    n.get("cpus", node.cpus);
  }
  fields.get("memory_bytes", h.memory_bytes);
  JsonFields os = fields.object("os");
  os.get("name", h.os.name);
  os.get("release", h.os.release);
  os.get("version", h.os.version);
  os.get("machine", h.os.machine);
  for (JsonFields g : fields.objects("gpus")) {
    GpuInfo& gpu = h.gpus.emplace_back();
    g.get("index", gpu.index);
    g.get("name", gpu.name);
    g.get("compute_major", gpu.compute_major);
    g.get("compute_minor", gpu.compute_minor);
    g.get("memory_bytes", gpu.memory_bytes);
    g.get("pci_bus_id", gpu.pci_bus_id);
    g.get("memory_bus_width_bits", gpu.memory_bus_width_bits);
    g.get("max_memory_clock_mhz", gpu.max_memory_clock_mhz);
    g.get("theoretical_bandwidth_gbs", gpu.theoretical_bandwidth_gbs);
  }
  return h;
}

nlohmann::ordered_json bandwidth_json(const BandwidthFigures& b) {
  return {{"unit", "GB/s"},
          {"read_isa", b.read_isa},
          {"buffer_bytes", b.buffer_bytes},
          {"read_all_cores", rate_json(b.read_all_cores)},
          {"read_one_core", rate_json(b.read_one_core)},
          {"triad_all_cores", rate_json(b.triad_all_cores)}};
}

BandwidthFigures read_bandwidth(JsonFields fields) {
  BandwidthFigures b;
  fields.get("read_isa", b.read_isa);
  fields.get("buffer_bytes", b.buffer_bytes);
  b.read_all_cores = read_rate(fields.object("read_all_cores"));
  b.read_one_core = read_rate(fields.object("read_one_core"));
  b.triad_all_cores = read_rate(fields.object("triad_all_cores"));
  return b;
}

nlohmann::ordered_json compute_json(const ComputeFigures& c) {
  return {{"f32_fma",
           {{"unit", "GFLOP/s"},
            {"isa", c.f32_isa},
            {"one_core", rate_json(c.f32_one_core)},
            {"all_cores", rate_json(c.f32_all_cores)}}},
          {"int8_dot",
           {{"unit", "GOP/s"},
            {"isa", c.int8_isa},
            {"one_core", rate_json(c.int8_one_core)},
            {"all_cores", rate_json(c.int8_all_cores)}}}};
}

ComputeFigures read_compute(JsonFields fields) {
  ComputeFigures c;
  JsonFields f32 = fields.object("f32_fma");
  f32.get("isa", c.f32_isa);
  c.f32_one_core = read_rate(f32.object("one_core"));
  c.f32_all_cores = read_rate(f32.object("all_cores"));
  JsonFields int8 = fields.object("int8_dot");
  int8.get("isa", c.int8_isa);
  c.int8_one_core = read_rate(int8.object("one_core"));
  c.int8_all_cores = read_rate(int8.object("all_cores"));
  return c;
}

nlohmann::ordered_json gpu_figures_json(const std::vector<GpuFigures>& figures) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const GpuFigures& f : figures) {
    out.push_back({{"index", f.index},
                   {"name", f.name},
                   {"pci_bus_id", f.pci_bus_id},
                   {"copy_bandwidth_gbs", optional_json(f.copy_bandwidth_gbs)},
                   {"f16_gemm_tflops", optional_json(f.f16_gemm_tflops)},
                   {"gemm_n", f.gemm_n},
                   {"problem", f.problem}});
  }
  return out;
}

std::vector<GpuFigures> read_gpu_figures(JsonFields& root) {
  std::vector<GpuFigures> figures;
  for (JsonFields g : root.objects("gpus")) {
    GpuFigures& f = figures.emplace_back();
    g.get("index", f.index);
    g.get("name", f.name);
    g.get("pci_bus_id", f.pci_bus_id);
    g.get("copy_bandwidth_gbs", f.copy_bandwidth_gbs);
    g.get("f16_gemm_tflops", f.f16_gemm_tflops);
    g.get("gemm_n", f.gemm_n);
    g.get("problem", f.problem);
  }
  return figures;
}

}  // namespace

std::string utc_timestamp(int64_t unix_seconds) {
  const std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm utc{};
  if (!gmtime_r(&t, &utc)) return {};
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

nlohmann::ordered_json host_probe_to_json(const HostProbe& p) {
  return {{"format", kFormatName},
          {"format_version", kHostProbeFormatVersion},
          {"fingerprint", p.fingerprint},
          {"measured_at", utc_timestamp(p.measured_at_unix)},
          {"measured_at_unix", p.measured_at_unix},
          {"measure_seconds", p.measure_seconds},
          {"host", host_json(p.host)},
          {"bandwidth", bandwidth_json(p.bandwidth)},
          {"compute", compute_json(p.compute)},
          {"gpus", gpu_figures_json(p.gpus)}};
}

std::string host_probe_to_text(const HostProbe& probe) {
  return host_probe_to_json(probe).dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

Result<HostProbe> host_probe_from_json(const nlohmann::json& json) {
  std::string error;
  JsonFields root(json, "", &error);
  std::string format;
  int version = 0;
  root.get("format", format);
  root.get("format_version", version);
  if (!error.empty()) return fail("host probe: {}", error);
  if (format != kFormatName) return fail("host probe: format is '{}', expected '{}'", format, kFormatName);
  if (version != kHostProbeFormatVersion) {
    return fail("host probe: format_version is {}, this build reads {}", version, kHostProbeFormatVersion);
  }
  HostProbe p;
  root.get("fingerprint", p.fingerprint);
  root.get("measured_at_unix", p.measured_at_unix);
  root.get("measure_seconds", p.measure_seconds);
  p.host = read_host(root.object("host"));
  p.bandwidth = read_bandwidth(root.object("bandwidth"));
  p.compute = read_compute(root.object("compute"));
  p.gpus = read_gpu_figures(root);
  if (!error.empty()) return fail("host probe: {}", error);
  return p;
}

Result<HostProbe> parse_host_probe(std::string_view text) {
  const auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return fail("host probe: not valid JSON");
  return host_probe_from_json(json);
}

}  // namespace infertune
