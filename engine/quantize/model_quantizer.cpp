#include "engine/quantize/model_quantizer.h"

#include <cstring>
#include <span>

#include "engine/quantize/row_encoder.h"
#include "kernels/quant.h"

namespace infertune {
namespace {

constexpr uint32_t kGgmlQuantVersion = 2;  // general.quantization_version of the current block layouts

uint64_t rows_of(const GgufTensorInfo& t) {
  uint64_t rows = 1;
  for (size_t i = 1; i < t.dims.size(); ++i) rows *= t.dims[i];
  return rows;
}

// One tensor's new bytes: its rows read as floats from the input and encoded.
Status convert_tensor(const GgufFile& input, const TensorPlan& p, unsigned threads, std::span<std::byte> out) {
  const GgufTensorInfo& src = *p.source;
  const std::span<const std::byte> in = input.tensor_data(src);
  const uint64_t in_row_bytes = ggml_row_bytes(src.type, src.dims[0]).value_or(0);
  RowEncoding encoding{src.name, p.type, src.dims[0], rows_of(src), threads, {}};
  encoding.importance = p.importance;
  const RowSource source = [&](uint64_t r, std::span<float> row) -> Status {
    return dequantize_row(src.type, in.subspan(r * in_row_bytes, in_row_bytes), row);
  };
  return encode_rows(encoding, source, out);
}

// llama-quantize passes these as metadata overrides, whose strings hold at most 127 bytes.
std::string override_string(const std::string& s) { return s.substr(0, 127); }

void set_importance_keys(const ImportanceFile& importance, GgufWriter& w) {
  w.set("quantize.imatrix.file", GgufValue{override_string(importance.path)});
  if (!importance.datasets.empty()) {
    w.set("quantize.imatrix.dataset", GgufValue{override_string(importance.datasets[0])});
  }
  w.set("quantize.imatrix.entries_count", GgufValue{static_cast<uint32_t>(importance.entries.size())});
  if (importance.chunk_count > 0) {
    w.set("quantize.imatrix.chunks_count", GgufValue{static_cast<uint32_t>(importance.chunk_count)});
  }
}

}  // namespace

Result<GgufWriter> quantized_layout(const GgufFile& input, const std::vector<TensorPlan>& plan,
                                    const QuantizeOptions& options) {
  const FileType& type = options.file_type;
  GgufWriter w;
  for (const GgufKeyValue& kv : input.metadata()) {
    // One output file: the split keys of a sharded input do not carry over (as llama-quantize without --keep-split).
    if (kv.key.starts_with("split.")) continue;
    w.set(kv.key, kv.value);
  }
  w.set("general.quantization_version", GgufValue{kGgmlQuantVersion});
  w.set("general.file_type", GgufValue{type.llama_ftype});
  if (options.importance && !options.importance->entries.empty()) set_importance_keys(*options.importance, w);
  for (const TensorPlan& p : plan) {
    if (Status s = w.add_tensor(p.source->name, p.source->dims, p.type); !s) return s.error();
  }
  return w;
}

Result<QuantizeSummary> quantize_model(const GgufFile& input, const std::vector<TensorPlan>& plan,
                                       const QuantizeOptions& options, const std::string& output_path,
                                       const QuantizeProgressFn& progress) {
  auto layout = quantized_layout(input, plan, options);
  if (!layout) return layout.error();
  const unsigned threads = encoder_threads(options.threads);
  QuantizeSummary summary;
  const auto fill = [&](size_t index, const GgufTensorInfo& info, std::span<std::byte> data) -> Status {
    if (index >= plan.size() || plan[index].source->name != info.name) {
      return fail("writer asked for tensor {} '{}', which the plan does not have there", index, info.name);
    }
    const TensorPlan& p = plan[index];
    if (p.convert()) {
      if (Status s = convert_tensor(input, p, threads, data); !s) return s;
      summary.converted += 1;
    } else {
      const std::span<const std::byte> in = input.tensor_data(*p.source);
      if (in.size() != data.size()) return fail("tensor '{}': {} bytes in, {} out", info.name, in.size(), data.size());
      std::memcpy(data.data(), in.data(), in.size());
      summary.copied += 1;
    }
    summary.input_bytes += p.source->n_bytes;
    summary.output_bytes += info.n_bytes;
    if (progress) progress(p, index, plan.size());
    return {};
  };
  if (Status s = layout->write_file(output_path, fill); !s) return s.error();
  return summary;
}

}  // namespace infertune
