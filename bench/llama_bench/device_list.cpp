#include "bench/llama_bench/device_list.h"

#include <fmt/format.h>

#include "engine/gpu/gpu_offload.h"
#include "kernels/cuda/cuda_devices.h"

namespace infertune {

std::string device_list_text(std::span<const ListedDevice> devices) {
  std::string text = "Available devices:\n";
  if (devices.empty()) return text + "  (none)\n";
  constexpr uint64_t kMiB = 1 << 20;
  for (const ListedDevice& d : devices) {
    const std::string free = d.free_bytes ? fmt::format("{} MiB free", *d.free_bytes / kMiB) : "free memory unknown";
    text += fmt::format("  CUDA{}: {} ({} MiB, {})\n", d.index, d.name, d.total_bytes / kMiB, free);
  }
  return text;
}

std::vector<ListedDevice> visible_devices() {
  const auto free = free_device_memory(nullptr);  // by CUDA index; an error leaves every device's free unknown
  std::vector<ListedDevice> listed;
  for (const CudaDevice& d : cuda_devices()) {
    ListedDevice device{.index = d.index, .name = d.name, .total_bytes = d.memory_bytes, .free_bytes = {}};
    if (free && d.index >= 0 && static_cast<size_t>(d.index) < free->size()) device.free_bytes = (*free)[d.index];
    listed.push_back(std::move(device));
  }
  return listed;
}

}  // namespace infertune
