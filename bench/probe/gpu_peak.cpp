#include "bench/probe/gpu_peak.h"

#include <algorithm>

#include "kernels/cuda/device_ops.h"
#include "kernels/cuda/device_runtime.h"

namespace infertune {
namespace {

void note(GpuFigures& f, const std::string& what, int code) {
  f.problem += (f.problem.empty() ? "" : "; ") + what + ": " + cuda::error_text(code);
}

GpuFigures measure_one(const GpuInfo& gpu, const GpuPlan& plan) {
  GpuFigures f{.index = gpu.index, .name = gpu.name, .pci_bus_id = gpu.pci_bus_id};
  if (const int code = cuda::set_device(gpu.index); code != 0) {
    note(f, "selecting the GPU", code);
    return f;
  }
  const size_t copy_bytes = std::max<size_t>(std::min<size_t>(plan.copy_bytes, gpu.memory_bytes / 8), 1u << 20);
  double gbps = 0;
  if (const int code = cuda::measure_copy_bandwidth(copy_bytes, plan.copy_repeats, &gbps); code != 0) {
    note(f, "copy bandwidth", code);
  } else {
    f.copy_bandwidth_gbs = gbps;
  }
  f.gemm_n = gpu.memory_bytes < (2ull << 30) ? std::min(plan.gemm_n, 4096) : plan.gemm_n;
  double tflops = 0;
  if (const int code = cuda::measure_gemm_tflops(f.gemm_n, plan.gemm_repeats, &tflops); code != 0) {
    note(f, "f16 GEMM", code);
  } else {
    f.f16_gemm_tflops = tflops;
  }
  return f;
}

}  // namespace

std::vector<GpuFigures> measure_gpu_peaks(const std::vector<GpuInfo>& gpus, const GpuPlan& plan) {
  std::vector<GpuFigures> figures;
  for (const GpuInfo& gpu : gpus) figures.push_back(measure_one(gpu, plan));
  return figures;
}

bool figures_describe(const GpuFigures& figures, const GpuInfo& gpu) {
  return figures.name == gpu.name && figures.pci_bus_id == gpu.pci_bus_id;
}

std::optional<std::vector<GpuFigures>> figures_of_live_gpus(const std::vector<GpuFigures>& measured,
                                                            const std::vector<GpuInfo>& live) {
  std::vector<GpuFigures> out;
  for (const GpuInfo& gpu : live) {
    const auto it =
        std::find_if(measured.begin(), measured.end(), [&](const GpuFigures& f) { return figures_describe(f, gpu); });
    if (it == measured.end()) return std::nullopt;
    out.push_back(*it);
    out.back().index = gpu.index;
  }
  return out;
}

}  // namespace infertune
