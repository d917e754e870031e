#include "bench/llama_bench/roofline.h"

#include <algorithm>

namespace infertune {

double weight_ops_per_run(const ModelFacts& model, const BenchTest& test) {
  const double prompt_pieces = test.n_prompt > 0 ? (test.n_prompt + test.n_batch() - 1) / test.n_batch() : 0;
  const double tokens = test.n_prompt + test.n_gen;
  return 2.0 * (double(model.layer_weight_elements) * tokens +
                double(model.output_weight_elements) * (prompt_pieces + test.n_gen));
}

double ReadBandwidth::for_threads(unsigned threads) const {
  if (one_core_gbps <= 0) return all_cores_gbps;
  const double scaled = std::max(1u, threads) * one_core_gbps;
  return all_cores_gbps > 0 ? std::min(scaled, all_cores_gbps) : scaled;
}

std::optional<double> roofline_gbps(const BenchResult& result, const std::optional<ReadBandwidth>& bandwidth) {
  if (!bandwidth) return std::nullopt;
  // -ngl auto on a host without GPUs runs on the CPU: the host's figure then.
  if (result.test.settings.n_gpu_layers != 0 && !bandwidth->gpu_gbps.empty()) {
    const int gpu = result.test.settings.main_gpu;
    if (gpu < 0 || size_t(gpu) >= bandwidth->gpu_gbps.size() || !(bandwidth->gpu_gbps[gpu] > 0)) return std::nullopt;
    return bandwidth->gpu_gbps[gpu];
  }
  const unsigned threads = result.threads_used ? result.threads_used : result.test.settings.placement.threads;
  const double gbps = bandwidth->for_threads(threads);
  return gbps > 0 ? std::optional(gbps) : std::nullopt;
}

std::optional<double> roofline_percent(const BenchResult& result, const std::optional<ReadBandwidth>& bandwidth) {
  if (!result.ok() || !result.model || result.test.n_prompt != 0 || result.test.n_gen == 0) return std::nullopt;
  const auto gbps = roofline_gbps(result, bandwidth);
  if (!gbps || result.samples_ns.empty()) return std::nullopt;
  const double bytes_per_second = double(result.model->weight_bytes_per_token) * avg_ts(result);
  return 100.0 * bytes_per_second / (*gbps * 1e9);
}

std::optional<double> achieved_gops(const BenchResult& result) {
  if (!result.ok() || !result.model || result.samples_ns.empty()) return std::nullopt;
  const double ops = weight_ops_per_run(*result.model, result.test);
  double sum = 0;
  for (uint64_t ns : result.samples_ns) sum += ns > 0 ? ops / double(ns) : 0.0;  // ops per ns = GOP/s
  return sum / double(result.samples_ns.size());
}

}  // namespace infertune
