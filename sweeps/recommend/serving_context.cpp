#include "sweeps/recommend/serving_context.h"

#include <fmt/format.h>

#include <algorithm>

#include "sweeps/recommend/candidates.h"
#include "sweeps/spec/config_fields.h"

namespace infertune {
namespace {

// The quantization the candidate's trials ran ("" for the file as given): its shape is the base's re-sized.
std::string variant_type(const Candidate& c) {
  const std::string quant = config_text(c.config, "quant");
  return !quant.empty() && c.model_path == config_text(c.config, "model") ? quant : "";
}

// What the command's context holds when full: every cell written, prompts in the largest pieces the batch
// settings allow, a logits row per sequence.
MemoryInputs full_context(const EngineSettings& s, int64_t n_ctx) {
  const ContextParams& c = s.context;
  return {.n_ctx = uint32_t(n_ctx),
          .n_batch = c.n_batch,
          .n_ubatch = c.n_ubatch,
          .max_decode_tokens = std::min(c.n_batch, c.n_ubatch),
          .n_outputs = std::max<uint32_t>(c.n_seq_max, 1),
          .type_k = c.type_k,
          .type_v = c.type_v,
          .use_mmap = s.use_mmap,
          .kv_cells_written = uint32_t(n_ctx),
          .n_gpu_layers = s.n_gpu_layers == kGpuLayersAuto ? 0 : s.n_gpu_layers,
          .kv_offload = s.kv_offload};
}

void assign(Candidate& c, int64_t min_ctx, const ModelShapeFn& shapes) {
  auto shape = shapes(c.model_path, variant_type(c));
  int64_t target = min_ctx;
  if (target <= 0) {
    target = kDefaultServingContext;
    if (shape && shape->config.n_ctx_train > 0) target = std::min<int64_t>(target, shape->config.n_ctx_train);
  }
  c.command_ctx = std::max(c.n_ctx(), target);
  if (!shape) {
    c.command_memory_note = fmt::format("memory not predicted: {}", shape.error().message);
    return;
  }
  auto memory = predict_memory(*shape, full_context(read_config_fields_or_defaults(c.config), c.command_ctx));
  if (!memory) {
    c.command_memory_note = fmt::format("memory not predicted: {}", memory.error().message);
    return;
  }
  c.command_memory = *memory;
}

}  // namespace

void assign_serving_contexts(std::vector<Candidate>& candidates, int64_t min_ctx, const ModelShapeFn& shapes) {
  for (Candidate& c : candidates) assign(c, min_ctx, shapes);
}

}  // namespace infertune
