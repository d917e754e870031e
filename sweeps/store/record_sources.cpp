#include "sweeps/store/record_sources.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bench/probe/host_fingerprint.h"
#include "bench/probe/probe_json.h"
#include "infertune_version.h"
#include "kernels/cuda/cuda_devices.h"
#include "kernels/matmul/matmul_registry.h"

#ifndef INFERTUNE_CXX_FLAGS
#define INFERTUNE_CXX_FLAGS ""
#endif

namespace infertune {

HostRecord host_record(const HostProbe& probe) {
  const nlohmann::ordered_json json = host_probe_to_json(probe);
  const auto dump = [](const nlohmann::ordered_json& j) {
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  };
  HostRecord host;
  host.fingerprint = probe.fingerprint.empty() ? host_fingerprint(probe.host) : probe.fingerprint;
  host.cpu_model = probe.host.cpu_model;
  host.cpu_features = fmt::format("{}", fmt::join(probe.host.cpu_features, " "));
  host.physical_cores = probe.host.physical_cores;
  host.hardware_threads = probe.host.hardware_threads;
  host.memory_bytes = static_cast<int64_t>(probe.host.memory_bytes);
  host.numa_nodes_json = dump(json["host"]["numa_nodes"]);
  host.gpus_json = dump(json["host"]["gpus"]);
  if (probe.bandwidth.read_all_cores.best > 0) host.read_bandwidth_gbs = probe.bandwidth.read_all_cores.best;
  host.probe_json = dump(json);
  return host;
}

BuildRecord this_build_record() {
  BuildRecord build;
  build.version = INFERTUNE_VERSION;
  build.git_commit = INFERTUNE_GIT_COMMIT;
  build.compiler = INFERTUNE_COMPILER;
  build.build_type = INFERTUNE_BUILD_TYPE;
  build.flags = INFERTUNE_CXX_FLAGS;
  build.backends = cuda_compiled() ? "cpu cuda" : "cpu";
  std::vector<std::string_view> variants;
  for (const MatmulVariant& v : compiled_matmul_variants()) variants.push_back(v.name);
  build.kernel_variants = fmt::format("{}", fmt::join(variants, " "));
  return build;
}

}  // namespace infertune
