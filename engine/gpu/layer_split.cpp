#include "engine/gpu/layer_split.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

namespace infertune {
namespace {

constexpr size_t kMaxDevices = 256;

// Running shares: share[d] = (proportions[0] + .. + proportions[d]) / total, in float as llama.cpp computes
// them, so that a layer on a boundary falls on the same side in both engines.
std::vector<float> running_shares(std::span<const double> proportions) {
  std::vector<float> shares(proportions.size());
  float sum = 0;
  for (size_t d = 0; d < proportions.size(); ++d) shares[d] = sum += static_cast<float>(proportions[d]);
  for (float& s : shares) s /= sum;
  return shares;
}

}  // namespace

std::string_view split_mode_name(SplitMode mode) { return mode == SplitMode::none ? "none" : "layer"; }

std::optional<SplitMode> split_mode_from_name(std::string_view name) {
  if (name == "none") return SplitMode::none;
  if (name == "layer") return SplitMode::layer;
  return std::nullopt;
}

Result<std::vector<DeviceLayers>> split_layers(int n_gpu_layers, uint32_t n_layers, const LayerSplitOptions& options,
                                               std::span<const uint64_t> free_bytes) {
  const size_t n_devices = free_bytes.size();
  if (options.main_gpu < 0 || static_cast<size_t>(options.main_gpu) >= std::max<size_t>(n_devices, 1)) {
    return fail("-mg {}: there {} {} CUDA device{}", options.main_gpu, n_devices == 1 ? "is" : "are", n_devices,
                n_devices == 1 ? "" : "s");
  }
  if (options.proportions.size() > n_devices) {
    return fail("-ts {}: {} entries for {} CUDA device{}", tensor_split_text(options.proportions),
                options.proportions.size(), n_devices, n_devices == 1 ? "" : "s");
  }
  for (double p : options.proportions) {
    if (!std::isfinite(p) || p < 0)
      return fail("-ts {}: entries are shares, 0 or more", tensor_split_text(options.proportions));
  }
  const OffloadSplit all = offload_split(n_gpu_layers, n_layers);
  const uint32_t n_offloaded = all.end_layer - all.first_layer + (all.output ? 1 : 0);
  if (n_offloaded == 0) return std::vector<DeviceLayers>{};
  if (options.mode == SplitMode::none || n_devices <= 1) return std::vector<DeviceLayers>{{options.main_gpu, all}};

  std::vector<double> proportions(n_devices, 0.0);
  std::copy(options.proportions.begin(), options.proportions.end(), proportions.begin());
  if (std::all_of(proportions.begin(), proportions.end(), [](double p) { return p == 0; })) {
    for (size_t d = 0; d < n_devices; ++d) proportions[d] = static_cast<double>(free_bytes[d]);
  }
  if (std::all_of(proportions.begin(), proportions.end(), [](double p) { return p == 0; })) {
    return std::vector<DeviceLayers>{{options.main_gpu, all}};  // no free memory reported anywhere
  }
  const std::vector<float> shares = running_shares(proportions);
  const auto device_of = [&](uint32_t j) {
    const float at = static_cast<float>(j) / static_cast<float>(n_offloaded);
    const auto it = std::upper_bound(shares.begin(), shares.end(), at);
    return static_cast<int>(std::min<size_t>(static_cast<size_t>(it - shares.begin()), n_devices - 1));
  };
  std::vector<DeviceLayers> out;
  for (uint32_t j = 0; j < n_offloaded; ++j) {
    const int device = device_of(j);
    const uint32_t layer = all.first_layer + j;  // == n_layers: the output layer
    if (out.empty() || out.back().device != device) out.push_back({device, {layer, layer, false}});
    if (layer < all.end_layer) {
      out.back().split.end_layer = layer + 1;
    } else {
      out.back().split.output = true;
    }
  }
  return out;
}

int fit_split_layers(const ModelConfig& config, const OffloadWeightBytes& weights, GpuMemoryInputs in,
                     const LayerSplitOptions& options, std::span<const uint64_t> free_bytes) {
  const auto fits = [&](int n) {
    auto shares = split_layers(n, config.n_layers, options, free_bytes);
    if (!shares) return false;
    return std::all_of(shares->begin(), shares->end(), [&](const DeviceLayers& share) {
      const auto device = static_cast<size_t>(share.device);
      if (device >= free_bytes.size()) return false;
      return predict_split_memory(config, weights, in, share.split).total() <= usable_device_bytes(free_bytes[device]);
    });
  };
  for (int n = static_cast<int>(config.n_layers) + 1; n > 0; --n) {
    if (fits(n)) return n;
  }
  return 0;
}

Result<std::vector<double>> parse_tensor_split(std::string_view text) {
  std::vector<double> out;
  const char separator = text.find('/') != std::string_view::npos ? '/' : ',';
  size_t start = 0;
  while (true) {
    const size_t end = std::min(text.find(separator, start), text.size());
    const std::string_view item = text.substr(start, end - start);
    double value = 0;
    const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (item.empty() || ec != std::errc() || ptr != item.data() + item.size() || !std::isfinite(value) || value < 0) {
      return fail("'{}': a share per device, each a number 0 or more, separated by '/' or ',' (3/1)", text);
    }
    out.push_back(value);
    if (out.size() > kMaxDevices) return fail("'{}': more than {} devices", text, kMaxDevices);
    if (end == text.size()) break;
    start = end + 1;
  }
  return out;
}

std::string tensor_split_text(std::span<const double> proportions, char separator) {
  std::string text;
  for (size_t d = 0; d < proportions.size(); ++d) {
    if (d > 0) text += separator;
    text += fmt::format("{}", proportions[d]);
  }
  return text;
}

}  // namespace infertune
