#include "bench/llama_bench/llama_bench_only_flags.h"

namespace infertune {
namespace {

constexpr std::string_view kDownloads = "downloading the model from Hugging Face";
constexpr std::string_view kGiveTheFile = "download the GGUF file and give it with -m";
constexpr std::string_view kFitting = "fitting the model to device memory with a margin";
constexpr std::string_view kNglAuto = "-ngl auto offloads the most layers that fit the GPU";

}  // namespace

const ForeignFlagTable& llama_bench_only_flags() {
  static const std::vector<ForeignFlag> flags{
      value_flag("--n-cpu-moe", {"-ncmoe"}, "keeping MoE experts on the CPU", {"0"},
                 "infertune runs dense models: llama, qwen2, qwen3, gemma3"),
      value_flag("--device", {"-dev"}, "choosing devices by name", {"auto"},
                 "-ngl, -sm, -mg and -ts place layers on the CUDA devices; -ngl 0 runs on the CPU only"),
      value_flag("--lazy-mode", {"-lzm"}, "a choice of lazy tensor reading", {"auto"},
                 "-mmp 1, the default, maps the file and reads pages as they are first used"),
      value_flag("--embeddings", {"-embd"}, "embeddings output", {"0"},
                 "bench measures with logits, as llama-bench by default"),
      refused_value_flag("--override-tensor", {"-ot"}, "placing tensors by name pattern",
                         "-ngl places whole layers on the GPU"),
      value_flag("--no-op-offload", {"-nopo"}, "a choice of whether a CPU layer's batch operations may run on the GPU",
                 {"0"}, "-ngl decides where each layer runs"),
      value_flag("--no-host", {}, "a choice of host buffer types", {"0"}, "bench uses the engine's own buffers"),
      refused_value_flag("--fit-target", {"-fitt"}, kFitting, kNglAuto),
      refused_value_flag("--fit-ctx", {"-fitc"}, kFitting, kNglAuto),
      refused_value_flag("--hf-repo", {"-hf", "-hfr"}, kDownloads, kGiveTheFile),
      refused_value_flag("--hf-file", {"-hff"}, kDownloads, kGiveTheFile),
      refused_value_flag("--hf-token", {"-hft"}, kDownloads, kGiveTheFile),
      taken_switch("--offline", {}, "working without downloads", "bench never downloads anything"),
  };
  static const ForeignFlagTable table{
      .tool = "llama-bench",
      .command = "bench",
      .group = "llama-bench flags of features infertune does not have (their defaults only)",
      .flags = flags,
  };
  return table;
}

}  // namespace infertune
