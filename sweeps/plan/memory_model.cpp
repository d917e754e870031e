#include "sweeps/plan/memory_model.h"

#include <algorithm>

#include "engine/arch/forward.h"
#include "engine/kv/kv_storage.h"

namespace infertune {

namespace {

// A tensor's bytes in `type` when its rows are whole blocks of it and it is a matrix (norm gains and other
// vectors keep their type, as quantizers leave them); otherwise as stored.
uint64_t bytes_as(const GgufTensorInfo& t, GgmlType type) {
  if (t.dims.size() < 2 || t.dims[0] == 0) return t.n_bytes;
  const auto row = ggml_row_bytes(type, t.dims[0]);
  return row ? *row * (t.n_elements / t.dims[0]) : t.n_bytes;
}

constexpr uint64_t kPageBytes = 4096;

uint64_t round_up_to_page(uint64_t bytes) { return (bytes + kPageBytes - 1) / kPageBytes * kPageBytes; }

// The resident bytes of one KV block (one layer, one head: n_ctx rows of head_bytes) when its first `cells`
// rows are written.
uint64_t written_block_bytes(uint64_t head_bytes, uint64_t n_ctx, uint64_t cells) {
  return std::min(head_bytes * n_ctx, round_up_to_page(head_bytes * cells));
}

// KvStorage's layout: K and V are each [n_layers][n_head_kv][n_cells][head bytes] (kv_storage.h).
uint64_t kv_resident_bytes(const KvLayout& layout, uint64_t cells) {
  const auto k_head = ggml_row_bytes(layout.type_k, layout.head_dim_k);
  const auto v_head = ggml_row_bytes(layout.type_v, layout.head_dim_v);
  if (!k_head || !v_head) return 0;  // kv_bytes_per_cell has already refused such a layout
  const uint64_t blocks = uint64_t(layout.n_layers) * layout.n_head_kv;
  return blocks *
         (written_block_bytes(*k_head, layout.n_cells, cells) + written_block_bytes(*v_head, layout.n_cells, cells));
}

}  // namespace

Result<ModelShape> model_shape(const GgufFile& file, std::optional<GgmlType> quant_type) {
  auto config = read_model_config(file);
  if (!config) return config.error();
  ModelShape shape{.config = std::move(*config)};
  uint64_t stored = 0;
  for (const GgufTensorInfo& t : file.tensors()) {
    stored += t.n_bytes;
    shape.tensor_bytes += quant_type ? bytes_as(t, *quant_type) : t.n_bytes;
  }
  shape.file_bytes = file.file_size() - stored + shape.tensor_bytes;
  shape.offload = offload_weight_bytes(
      file, shape.config, [&](const GgufTensorInfo& t) { return quant_type ? bytes_as(t, *quant_type) : t.n_bytes; });
  return shape;
}

Result<ModelShape> read_model_shape(const std::string& path, std::optional<GgmlType> quant_type) {
  auto file = GgufFile::open(path);
  if (!file) return file.error();
  return model_shape(*file, quant_type);
}

uint64_t forward_scratch_bytes(const ModelConfig& c, uint64_t n_tokens) {
  return uint64_t{forward_scratch_sizes(c, n_tokens).total()} * sizeof(float);  // what ForwardScratch::reserve takes
}

uint32_t largest_piece(const MemoryInputs& in) {
  // Context::decode evaluates a batch in pieces of at most min(batch tokens, n_ubatch <= n_batch).
  return std::max<uint32_t>(1, std::min({in.max_decode_tokens, in.n_ubatch, in.n_batch}));
}

GpuMemoryInputs gpu_memory_inputs(const MemoryInputs& in) {
  return {.n_gpu_layers = in.n_gpu_layers,
          .kv_offload = in.kv_offload,
          .n_cells = in.n_ctx,
          .type_k = in.type_k,
          .type_v = in.type_v,
          .max_tokens = largest_piece(in)};
}

Result<MemoryPrediction> predict_memory(const ModelShape& model, const MemoryInputs& in) {
  const ModelConfig& c = model.config;
  const KvLayout layout{.n_layers = c.n_layers,
                        .n_cells = in.n_ctx,
                        .n_head_kv = c.n_head_kv,
                        .head_dim_k = c.head_dim,
                        .head_dim_v = c.head_dim_v,
                        .type_k = in.type_k,
                        .type_v = in.type_v};
  auto per_cell = kv_bytes_per_cell(layout);
  if (!per_cell) return per_cell.error();
  MemoryPrediction p;
  p.weights = in.use_mmap ? model.tensor_bytes : model.file_bytes;
  p.kv = static_cast<uint64_t>(*per_cell) * in.n_ctx;
  const uint32_t written = in.kv_cells_written == 0 ? in.n_ctx : std::min(in.kv_cells_written, in.n_ctx);
  KvLayout host_layout = layout;  // the layers whose K/V the host writes
  if (in.n_gpu_layers != 0 && in.kv_offload)
    host_layout.n_layers = offload_split(in.n_gpu_layers, c.n_layers).first_layer;
  p.kv_resident = std::min(p.kv, kv_resident_bytes(host_layout, written));
  if (in.gpu_shares.empty()) {
    p.gpu = predict_gpu_memory(c, model.offload, gpu_memory_inputs(in));
  }
  for (const DeviceLayers& share : in.gpu_shares) {
    const GpuMemoryUse use = predict_split_memory(c, model.offload, gpu_memory_inputs(in), share.split);
    p.gpu += use;
    p.gpu_devices.push_back({share, use});
  }
  p.compute = forward_scratch_bytes(c, largest_piece(in)) + uint64_t(in.n_outputs) * c.n_vocab * sizeof(float);
  return p;
}

}  // namespace infertune
