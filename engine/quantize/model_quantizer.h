#pragma once
// Writes the quantized copy of a GGUF file that a plan (quantize_plan.h) describes: the input's metadata with
// general.file_type and general.quantization_version set as llama-quantize sets them, the tensors in the input's
// order, each converted row by row (read as floats, encoded in its new type, rows spread over threads) or copied.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/gguf/gguf_file.h"
#include "engine/gguf/gguf_writer.h"
#include "engine/quantize/quantize_plan.h"
#include "kernels/result.h"

namespace infertune {

// Called after each tensor is written: its plan, its index and the count.
using QuantizeProgressFn = std::function<void(const TensorPlan& tensor, size_t index, size_t total)>;

struct QuantizeSummary {
  uint64_t input_bytes = 0;   // tensor data in
  uint64_t output_bytes = 0;  // tensor data out
  size_t converted = 0;       // tensors given a new type
  size_t copied = 0;          // tensors written as they were
};

// The output's metadata and tensor table, without data (also what --dry-run sizes). With an importance matrix, the
// quantize.imatrix.* keys that llama-quantize adds: file, dataset (the first), entries_count, chunks_count.
Result<GgufWriter> quantized_layout(const GgufFile& input, const std::vector<TensorPlan>& plan,
                                    const QuantizeOptions& options);

Result<QuantizeSummary> quantize_model(const GgufFile& input, const std::vector<TensorPlan>& plan,
                                       const QuantizeOptions& options, const std::string& output_path,
                                       const QuantizeProgressFn& progress = {});

}  // namespace infertune
