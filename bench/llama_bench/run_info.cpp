#include "bench/llama_bench/run_info.h"

#include "bench/probe/probe_cache.h"
#include "engine/threading/placement.h"
#include "infertune_version.h"
#include "kernels/cpu_features.h"
#include "kernels/cuda/cuda_devices.h"

namespace infertune {
namespace {

// llama-bench prints its default -t as the count it runs (n_threads), not as "default": so do we. 0 when the
// machine's topology cannot be read (each test then fails with that reason anyway).
unsigned default_thread_count() {
  auto topology = Topology::load_machine();
  if (!topology) return 0;
  auto plan = plan_placement(*topology, PlacementOptions{});
  return plan ? plan->n_threads : 0;
}

}  // namespace

RunInfo gather_run_info(const BenchParams& params, BenchProgress& progress) {
  RunInfo run;
  run.build_commit = INFERTUNE_GIT_COMMIT;
  run.build_number = INFERTUNE_BUILD_NUMBER;
  run.cpu_info = cpu_features().model_name;
  for (const CudaDevice& gpu : cuda_devices()) run.gpu_info += (run.gpu_info.empty() ? "" : ", ") + gpu.name;
  // As llama-bench: the backends this build can run on this host (-ngl 0 tests run on the CPU either way).
  run.backends = run.gpu_info.empty() ? "CPU" : "CUDA";
  run.default_threads = default_thread_count();
  if (params.probe) {
    auto loaded = load_or_measure_host_probe_default(false);
    if (!loaded) {
      progress.note("warning: no host probe, so no roofline %: " + loaded.error().message);
    } else {
      for (const std::string& warning : loaded->warnings) progress.note("warning: " + warning);
      run.read_bandwidth = ReadBandwidth{.one_core_gbps = loaded->probe.bandwidth.read_one_core.best,
                                         .all_cores_gbps = loaded->probe.bandwidth.read_all_cores.best,
                                         .gpu_gbps = {}};
      for (const GpuFigures& gpu : loaded->probe.gpus) {
        if (gpu.index < 0) continue;
        auto& gbps = run.read_bandwidth->gpu_gbps;
        if (gbps.size() <= size_t(gpu.index)) gbps.resize(gpu.index + 1, 0.0);
        gbps[gpu.index] = gpu.copy_bandwidth_gbs.value_or(0.0);
      }
    }
  }
  return run;
}

}  // namespace infertune
