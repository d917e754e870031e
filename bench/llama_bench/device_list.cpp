#include "bench/llama_bench/device_list.h"

#include <fmt/format.h>

#include "kernels/cuda/cuda_devices.h"
#include "kernels/cuda/device_runtime.h"

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
  std::vector<ListedDevice> listed;
  for (const CudaDevice& d : cuda_devices()) {
    ListedDevice device{.index = d.index, .name = d.name, .total_bytes = d.memory_bytes, .free_bytes = {}};
    size_t free_bytes = 0, total_bytes = 0;
    if (cuda::set_device(d.index) == 0 && cuda::memory_info(&free_bytes, &total_bytes) == 0) {
      device.free_bytes = free_bytes;
    }
    listed.push_back(std::move(device));
  }
  return listed;
}

}  // namespace infertune
