#pragma once
// Measured roofline figures of each CUDA GPU: the device memory bandwidth a streaming copy kernel reaches
// (bytes read plus bytes written; what a memory-bound matrix-vector product can reach) and the f16 tensor
// throughput of a cuBLAS GEMM with f32 accumulation (what a prompt batch's products can reach). The
// theoretical bandwidth they are compared against is NVML's and belongs to the host description
// (GpuInfo::theoretical_bandwidth_gbs), read live.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "bench/probe/host_info.h"

namespace infertune {

struct GpuFigures {
  int index = 0;             // the CUDA device index when measured
  std::string name;          // with pci_bus_id: which GPU these are of (the index moves with CUDA_VISIBLE_DEVICES)
  std::string pci_bus_id{};  // "" where the runtime did not say
  std::optional<double> copy_bandwidth_gbs{};  // GB/s, read + written
  std::optional<double> f16_gemm_tflops{};     // TFLOP/s, 2 n^3 per n x n x n product
  int gemm_n = 0;                              // the product's size
  std::string problem{};                       // why a figure is missing ("" when both were measured)
  bool operator==(const GpuFigures&) const = default;
};

struct GpuPlan {
  size_t copy_bytes = 512u << 20;  // each of the copy's two buffers, at most 1/8 of the device's memory
  int copy_repeats = 20;
  int gemm_n = 8192;  // 4096 on devices under 2 GiB (the product needs 8 n^2 bytes)
  int gemm_repeats = 10;
};

// Each GPU in turn (a fraction of a second each on a data-center GPU). A GPU that fails a measurement gets
// the error in `problem`, never an error of the probe: a busy or broken GPU must not cost the CPU figures.
std::vector<GpuFigures> measure_gpu_peaks(const std::vector<GpuInfo>& gpus, const GpuPlan& plan);

// Whether `figures` were measured on `gpu` (same name and PCI bus id).
bool figures_describe(const GpuFigures& figures, const GpuInfo& gpu);

// The measured figures of each live GPU, in the live order and with the live indices (figures of GPUs no
// longer visible are dropped); nullopt when a live GPU was not measured, so the probe must measure again.
std::optional<std::vector<GpuFigures>> figures_of_live_gpus(const std::vector<GpuFigures>& measured,
                                                            const std::vector<GpuInfo>& live);

}  // namespace infertune
