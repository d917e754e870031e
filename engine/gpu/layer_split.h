#pragma once
// Which device runs which offloaded layers (-sm, -ts, -mg), as llama.cpp deals them: with -sm none every
// offloaded layer runs on the main GPU (-mg); with -sm layer (the default) the offloaded layers, the output
// layer counted as one more, are dealt over the devices in proportion to -ts (by default, to each device's
// free memory): offloaded layer j of n goes to the first device whose running share of the total exceeds
// j / n. Each device then holds one run of consecutive layers, the last device the output layer.
//
//   split_layers(33, 32, {.mode = SplitMode::layer, .proportions = {3, 1}})
//     -> device 0: layers 0..24; device 1: layers 25..31 and the output layer
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/gpu/gpu_memory.h"
#include "kernels/result.h"

namespace infertune {

enum class SplitMode { none, layer };  // llama.cpp's "row" (tensor parallel) is not done

std::string_view split_mode_name(SplitMode mode);  // "none", "layer"
std::optional<SplitMode> split_mode_from_name(std::string_view name);

struct LayerSplitOptions {
  SplitMode mode = SplitMode::layer;
  int main_gpu = 0;                      // -mg: the device of -sm none
  std::vector<double> proportions = {};  // -ts, one per device (index = device); empty or all zero: free memory
};

// The layers one device runs.
struct DeviceLayers {
  int device = 0;
  OffloadSplit split = {};
};

// The devices the last `n_gpu_layers` of `n_layers` layers run on (llama.cpp's count: more than n_layers adds
// the output layer, negative is everything), in layer order, each with a non-empty run; none for 0.
// `free_bytes[d]` is device d's free memory: the default proportions, and the number of devices. Errors: -ts
// with more entries than devices, a negative or non-finite entry, -mg not a device.
Result<std::vector<DeviceLayers>> split_layers(int n_gpu_layers, uint32_t n_layers, const LayerSplitOptions& options,
                                               std::span<const uint64_t> free_bytes);

// -ngl auto over the devices: the largest N in 0 .. n_layers + 1 whose shares (split_layers over
// `free_bytes`) each fit their device's free memory less kDeviceReserveBytes; 0 when none fits or the
// options do not match the devices.
int fit_split_layers(const ModelConfig& config, const OffloadWeightBytes& weights, GpuMemoryInputs in,
                     const LayerSplitOptions& options, std::span<const uint64_t> free_bytes);

// -ts as written: "3,1" or "3/1" (llama-bench's separator) -> {3, 1}; the error says what is allowed.
Result<std::vector<double>> parse_tensor_split(std::string_view text);
// {3, 1} -> "3/1" (the canonical spelling; llama-bench's), or with `separator` ',' (llama-cli's and -server's).
std::string tensor_split_text(std::span<const double> proportions, char separator = '/');

}  // namespace infertune
