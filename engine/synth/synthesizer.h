#pragma once
// Writes a complete synthetic GGUF model: llama.cpp-compatible metadata and tokenizer, the tensors that
// arch_tensors.h says the config implies, each in the type quant_mix.h picks, filled with deterministic
// random weights. Tensors are generated and quantized straight into the memory-mapped output file, row
// chunks spread over threads, each thread holding one row of floats: memory stays at the file's size.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/gguf/gguf_writer.h"
#include "engine/model/arch_tensors.h"
#include "engine/model/model_config.h"
#include "engine/synth/quant_mix.h"
#include "kernels/result.h"

namespace infertune {

struct SynthRequest {
  ModelConfig config;  // complete: n_vocab set (the vocabulary is generated to match)
  std::string preset;  // recorded in the metadata; general.name is "synthetic-<preset>"
  FileType file_type;
  QuantMixOptions mix;
  uint64_t seed = 1;
  unsigned threads = 0;  // 0: std::thread::hardware_concurrency()
};

struct PlannedTensor {
  TensorSpec spec;
  GgmlType type = GgmlType::F32;
};

struct SynthPlan {
  GgufWriter writer;                   // metadata and tensor table, in file order
  std::vector<PlannedTensor> tensors;  // same order as writer.tensors()
};

// Metadata (general.*, {arch}.*, tokenizer.*) and the typed tensor table; no tensor data yet.
Result<SynthPlan> plan_synthetic_model(const SynthRequest& request);

struct SynthProgress {
  size_t tensors_done = 0;
  size_t tensors_total = 0;
  uint64_t bytes_done = 0;  // tensor data
  uint64_t bytes_total = 0;
};
using SynthProgressFn = std::function<void(const SynthProgress&)>;

struct SynthSummary {
  uint64_t file_bytes = 0;
  uint64_t n_params = 0;
  size_t n_tensors = 0;
};

Result<SynthSummary> write_synthetic_model(const SynthRequest& request, const std::string& path,
                                           const SynthProgressFn& progress = {});
Result<std::vector<std::byte>> synthesize_in_memory(const SynthRequest& request);  // tests

}  // namespace infertune
