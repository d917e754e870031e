#pragma once
// `bench --list-devices`, in llama-bench's words: "Available devices:" and a line per GPU the engine can
// offload to ("  CUDA0: NVIDIA H100 80GB HBM3 (81079 MiB, 80543 MiB free)"), or "  (none)".
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace infertune {

struct ListedDevice {
  int index = 0;
  std::string name;
  uint64_t total_bytes = 0;
  std::optional<uint64_t> free_bytes;  // absent when the runtime could not say
};

std::string device_list_text(std::span<const ListedDevice> devices);

// The CUDA devices visible now, with their free memory (free_device_memory, engine/gpu/gpu_offload.h).
std::vector<ListedDevice> visible_devices();

}  // namespace infertune
