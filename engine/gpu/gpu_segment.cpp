#include "engine/gpu/gpu_segment.h"

#include <algorithm>
#include <cstdlib>
#include <string_view>
#include <tuple>

#include "engine/arch/transformer_blocks.h"
#include "kernels/cuda/device_ops.h"
#include "kernels/cuda/device_runtime.h"
#include "kernels/ops/rope.h"

namespace infertune {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

uint32_t type_id(GgmlType t) { return static_cast<uint32_t>(t); }

// How prompt batches multiply quantized weights: f16 (decode the weights to f16, cuBLAS) or int8 (the
// weights' own integers against int8 activations, linear_int8.cu). INFERTUNE_CUDA_BATCH=int8|f16 picks;
// f16 is the default until the int8 kernel has been measured against it on a GPU.
enum class BatchPath { f16, int8 };

BatchPath batch_path() {
  static const BatchPath path = [] {
    const char* choice = std::getenv("INFERTUNE_CUDA_BATCH");
    return choice != nullptr && std::string_view(choice) == "int8" ? BatchPath::int8 : BatchPath::f16;
  }();
  return path;
}

}  // namespace

GpuSegment::GpuSegment(const Model& model, DeviceLayers layers, const GpuSegmentParams& params,
                       std::shared_ptr<const GpuWeights> weights)
    : model_(&model), params_(params), split_(layers.split), device_(layers.device), weights_(std::move(weights)) {
  memory_.weights = weights_->bytes();
}

GpuSegment::~GpuSegment() {
  if (stream_) {
    cuda::set_device(device_);
    cuda::stream_synchronize(stream_);
  }
  cuda::blas_destroy(blas_);
  cuda::stream_destroy(stream_);
}

Result<std::unique_ptr<GpuSegment>> GpuSegment::create(const Model& model, DeviceLayers layers,
                                                       const GpuSegmentParams& params,
                                                       std::shared_ptr<const GpuWeights> weights) {
  if (Status s = cuda_status(cuda::set_device(layers.device), "selecting the GPU"); !s) return s.error();
  std::unique_ptr<GpuSegment> gpu(new GpuSegment(model, layers, params, std::move(weights)));
  if (Status s = cuda_status(cuda::stream_create(&gpu->stream_), "creating a CUDA stream"); !s) return s.error();
  if (Status s = cuda_status(cuda::blas_create(&gpu->blas_, gpu->stream_), "starting cuBLAS"); !s) return s.error();
  if (Status s = gpu->allocate_kv(); !s) return s.error();
  if (Status s = gpu->allocate_activations(); !s) return s.error();
  return gpu;
}

Result<DeviceBuffer> GpuSegment::allocate(size_t bytes, std::string_view what, uint64_t GpuMemoryUse::*account) {
  if (params_.memory_budget != 0 && memory_.total() + bytes > params_.memory_budget) {
    return fail("out of GPU memory for {}: it needs {:.1f} MiB, {:.1f} MiB of the {:.1f} MiB budget are free", what,
                bytes / kMiB, (params_.memory_budget - std::min(params_.memory_budget, memory_.total())) / kMiB,
                params_.memory_budget / kMiB);
  }
  auto buffer = DeviceBuffer::allocate(bytes, what);
  if (buffer) memory_.*account += bytes;
  return buffer;
}

// ---- KV cache and activations ----

Status GpuSegment::allocate_kv() {
  if (!params_.kv_offload) return {};
  const ModelConfig& c = model_->config();
  if (c.head_dim % 32 != 0 || c.head_dim_v % 32 != 0) {
    return fail("head size {}/{}: the GPU KV cache needs multiples of 32 (use --no-kv-offload)", c.head_dim,
                c.head_dim_v);
  }
  // The two buffers of a layer add up to gpu_kv_bytes_per_layer, the memory model's figure.
  const size_t k_bytes = gpu_kv_head_bytes(params_.type_k, c.head_dim) * c.n_head_kv * params_.n_cells;
  const size_t v_bytes = gpu_kv_head_bytes(params_.type_v, c.head_dim_v) * c.n_head_kv * params_.n_cells;
  caches_.resize(split_.end_layer - split_.first_layer);
  for (size_t i = 0; i < caches_.size(); ++i) {
    const uint32_t il = split_.first_layer + static_cast<uint32_t>(i);
    auto k =
        allocate(k_bytes, fmt::format("the K cache of layer {} ({} cells)", il, params_.n_cells), &GpuMemoryUse::kv);
    if (!k) return k.error();
    auto v =
        allocate(v_bytes, fmt::format("the V cache of layer {} ({} cells)", il, params_.n_cells), &GpuMemoryUse::kv);
    if (!v) return v.error();
    caches_[i].k = std::move(*k);
    caches_[i].v = std::move(*v);
  }
  return {};
}

Status GpuSegment::allocate_activations() {
  const ActivationSizes sizes = activation_sizes(model_->config(), params_.max_tokens, split_.output);
  struct Slot {
    DeviceBuffer* dst;
    size_t bytes;
    const char* what;
  };
  const Slot slots[] = {
      {&act_.x, sizes.x, "activations (x)"},
      {&act_.xn, sizes.xn, "activations (xn)"},
      {&act_.proj, sizes.proj, "activations (proj)"},
      {&act_.q, sizes.q, "activations (q)"},
      {&act_.k, sizes.k, "activations (k)"},
      {&act_.v, sizes.v, "activations (v)"},
      {&act_.attn, sizes.attn, "activations (attention)"},
      {&act_.gate, sizes.gate, "activations (ffn gate)"},
      {&act_.up, sizes.up, "activations (ffn up)"},
      {&act_.cells, sizes.cells, "the ubatch's cells"},
      {&act_.key_offset, sizes.key_offset, "the ubatch's key lists"},
      {&act_.n_keys, sizes.n_keys, "the ubatch's key counts"},
      {&act_.rope_cos, sizes.rope, "rope angles"},
      {&act_.rope_sin, sizes.rope, "rope angles"},
      {&act_.window_key_offset, sizes.window_key_offset, "the ubatch's sliding-window key lists"},
      {&act_.window_n_keys, sizes.window_n_keys, "the ubatch's sliding-window key counts"},
      {&act_.window_rope_cos, sizes.window_rope, "the sliding layers' rope angles"},
      {&act_.window_rope_sin, sizes.window_rope, "the sliding layers' rope angles"},
      {&act_.output_rows, sizes.output_rows, "the output rows"},
      {&act_.logits, sizes.logits, "the logits"},
      {&act_.weights_f16, sizes.weights_f16, "the batched products' f16 weights"},
      {&act_.input_f16, sizes.input_f16, "the batched products' f16 input"},
      {&act_.input_q8, sizes.input_q8, "the batched products' int8 input"},
      {&act_.input_q8_scales, sizes.input_q8_scales, "the batched products' int8 input scales"},
  };
  for (const Slot& s : slots) {
    if (s.bytes == 0) continue;
    auto buffer = allocate(s.bytes, s.what, &GpuMemoryUse::compute);
    if (!buffer) return buffer.error();
    *s.dst = std::move(*buffer);
  }
  return {};
}

// ---- one step ----

namespace {

// Rope angles cos/sin [n][n_rot / 2] of the ubatch's positions under `rope`.
void rope_tables(const RopeParams& rope, const KvUbatch& kv, size_t n, std::vector<float>& cos,
                 std::vector<float>& sin) {
  const uint32_t half = rope.n_rot / 2;
  cos.assign(n * half, 0.0f);
  sin.assign(n * half, 0.0f);
  for (size_t t = 0; t < n && half > 0; ++t) {
    rope_angles(rope, kv.positions[t], std::span(cos).subspan(t * half, half), std::span(sin).subspan(t * half, half));
  }
}

}  // namespace

// The first sliding layer of the share, whose rope every sliding layer shares; none without a window.
std::optional<uint32_t> GpuSegment::first_sliding_layer() const {
  for (uint32_t il = split_.first_layer; il < split_.end_layer; ++il) {
    if (model_->config().is_sliding_layer(il)) return il;
  }
  return std::nullopt;
}

Status GpuSegment::upload_ubatch(const ForwardPass& pass, const ForwardBatch& batch, size_t n) {
  const KvUbatch& kv = batch.kv;
  const uint32_t window = model_->config().sliding_window;
  std::vector<int32_t> offset(n), n_keys(n), window_offset(window != 0 ? n : 0), window_n_keys(window_offset.size());
  std::vector<uint32_t> key_cells;
  for (const KvAttentionGroup& g : kv.active_groups()) {
    const auto base = static_cast<int32_t>(key_cells.size());
    key_cells.insert(key_cells.end(), g.key_cells.begin(), g.key_cells.end());
    for (size_t i = 0; i < g.rows.size(); ++i) {
      offset[g.rows[i]] = base;
      n_keys[g.rows[i]] = static_cast<int32_t>(g.n_keys[i]);
      if (window == 0) continue;
      const uint32_t first = window_start(kv, g, i, window);
      window_offset[g.rows[i]] = base + static_cast<int32_t>(first);
      window_n_keys[g.rows[i]] = static_cast<int32_t>(g.n_keys[i] - first);
    }
  }
  if (key_cells.size() > key_cells_capacity_) {
    const size_t capacity = std::max(key_cells.size(), 2 * key_cells_capacity_);
    act_.key_cells = DeviceBuffer();
    memory_.compute -= key_cells_capacity_ * 4;
    key_cells_capacity_ = 0;
    auto buffer = allocate(capacity * 4, "the ubatch's key lists", &GpuMemoryUse::compute);
    if (!buffer) return buffer.error();
    act_.key_cells = std::move(*buffer);
    key_cells_capacity_ = capacity;
  }
  std::vector<float> cos, sin, window_cos, window_sin;
  rope_tables(pass.rope, kv, n, cos, sin);
  if (const auto sliding = first_sliding_layer()) rope_tables(pass.rope_for(*sliding), kv, n, window_cos, window_sin);
  struct Copy {
    void* dst;
    const void* src;
    size_t bytes;
  };
  for (const Copy& c :
       {Copy{act_.cells.get(), kv.cells.data(), n * 4}, Copy{act_.key_offset.get(), offset.data(), n * 4},
        Copy{act_.n_keys.get(), n_keys.data(), n * 4},
        Copy{act_.key_cells.get(), key_cells.data(), key_cells.size() * 4},
        Copy{act_.rope_cos.get(), cos.data(), cos.size() * 4}, Copy{act_.rope_sin.get(), sin.data(), sin.size() * 4},
        Copy{act_.output_rows.get(), batch.output_rows.data(), batch.output_rows.size() * 4},
        Copy{act_.window_key_offset.get(), window_offset.data(), window_offset.size() * 4},
        Copy{act_.window_n_keys.get(), window_n_keys.data(), window_n_keys.size() * 4},
        Copy{act_.window_rope_cos.get(), window_cos.data(), window_cos.size() * 4},
        Copy{act_.window_rope_sin.get(), window_sin.data(), window_sin.size() * 4}}) {
    if (c.bytes == 0) continue;
    if (Status s = cuda_status(cuda::copy_to_device(c.dst, c.src, c.bytes, stream_), "uploading the ubatch"); !s) {
      return s;
    }
  }
  // The host vectors above go out of scope: pageable copies are staged, but make sure before returning.
  return cuda_status(cuda::stream_synchronize(stream_), "uploading the ubatch");
}

Status GpuSegment::linear(const GpuMatrix& w, const float* x, size_t n, float* y) {
  const auto type = type_id(w.type);
  if (n <= static_cast<size_t>(cuda::kMatvecMaxTokens)) {
    return cuda_status(cuda::matvec(type, w.data.get(), w.n_rows, w.n_cols, x, static_cast<int64_t>(n), y, stream_),
                       "matrix-vector product");
  }
  if (batch_path() == BatchPath::int8 && cuda::int8_form_supported(type)) {
    if (Status s =
            cuda_status(cuda::quantize_activations_q8(x, static_cast<int64_t>(n), w.n_cols, act_.input_q8.as<int8_t>(),
                                                      act_.input_q8_scales.as<float>(), stream_),
                        "quantizing the input to int8");
        !s) {
      return s;
    }
    return cuda_status(cuda::gemm_int8(type, w.data.get(), w.n_rows, w.n_cols, act_.input_q8.as<int8_t>(),
                                       act_.input_q8_scales.as<float>(), static_cast<int64_t>(n), y, w.n_rows, stream_),
                       "int8 product");
  }
  if (w.type == GgmlType::F32) {
    return cuda_status(
        cuda::gemm_f32(blas_, w.data.as<float>(), w.n_rows, w.n_cols, x, static_cast<int64_t>(n), y, w.n_rows),
        "cuBLAS f32 product");
  }
  if (Status s = cuda_status(cuda::convert_to_f16(x, static_cast<int64_t>(n) * w.n_cols, act_.input_f16.get(), stream_),
                             "converting the input to f16");
      !s) {
    return s;
  }
  if (w.type == GgmlType::F16) {
    return cuda_status(cuda::gemm_f16(blas_, w.data.get(), w.n_rows, w.n_cols, act_.input_f16.get(),
                                      static_cast<int64_t>(n), y, w.n_rows),
                       "cuBLAS f16 product");
  }
  // Decode a slice of rows at a time into the f16 buffer and multiply it into its columns of y.
  const int64_t chunk_rows = std::max<int64_t>(1, static_cast<int64_t>(kF16ChunkValues) / w.n_cols);
  const uint64_t row_bytes = w.data.bytes() / static_cast<uint64_t>(w.n_rows);
  for (int64_t r0 = 0; r0 < w.n_rows; r0 += chunk_rows) {
    const int64_t rows = std::min(chunk_rows, w.n_rows - r0);
    const void* src = w.data.as<std::byte>() + r0 * row_bytes;
    if (Status s = cuda_status(cuda::dequantize_to_f16(type, src, rows, w.n_cols, act_.weights_f16.get(), stream_),
                               "decoding weights to f16");
        !s) {
      return s;
    }
    if (Status s = cuda_status(cuda::gemm_f16(blas_, act_.weights_f16.get(), rows, w.n_cols, act_.input_f16.get(),
                                              static_cast<int64_t>(n), y + r0, w.n_rows),
                               "cuBLAS f16 product");
        !s) {
      return s;
    }
  }
  return {};
}

Status GpuSegment::layer_forward(const ForwardPass& pass, const ForwardBatch& batch, uint32_t il, size_t n) {
  const ModelConfig& c = model_->config();
  const GpuLayerWeights& l = weights_->layer(il);
  const auto tokens = static_cast<int64_t>(n);
  float* x = act_.x.as<float>();
  float* xn = act_.xn.as<float>();
  float* q = act_.q.as<float>();
  float* k = act_.k.as<float>();
  float* v = act_.v.as<float>();
  float* proj = act_.proj.as<float>();
  float* gate = act_.gate.as<float>();
  const std::string where = fmt::format("layer {} on GPU {}", il, device_);
  auto step = [&](int code) { return cuda_status(code, where); };

  if (Status s = step(cuda::rms_norm(x, l.attn_norm.as<float>(), c.rms_eps, tokens, c.n_embd, xn, stream_)); !s)
    return s;
  if (Status s = linear(l.q, xn, n, q); !s) return s;
  if (Status s = linear(l.k, xn, n, k); !s) return s;
  if (Status s = linear(l.v, xn, n, v); !s) return s;
  struct Bias {
    const DeviceBuffer* bias;
    float* y;
    uint32_t width;
  };
  for (const Bias& b : {Bias{&l.q_bias, q, c.q_dim()}, Bias{&l.k_bias, k, c.k_dim()}, Bias{&l.v_bias, v, c.v_dim()}}) {
    if (b.bias->get() == nullptr) continue;
    if (Status s = step(cuda::add_bias(b.y, b.bias->as<float>(), tokens, b.width, stream_)); !s) return s;
  }
  // The per-head norms (qwen3, gemma3): every head of every token is a row of head_dim.
  for (auto [gain, y, heads] : {std::tuple{&l.q_norm, q, c.n_head}, std::tuple{&l.k_norm, k, c.n_head_kv}}) {
    if (gain->get() == nullptr) continue;
    const int64_t rows = tokens * heads;
    if (Status s = step(cuda::rms_norm(y, gain->as<float>(), c.rms_eps, rows, c.head_dim, y, stream_)); !s) return s;
  }
  const bool sliding = c.is_sliding_layer(il);
  const bool neox = pass.rope.layout == RopeLayout::Neox;
  const auto n_rot = static_cast<int>(pass.rope.n_rot);
  const float* cos = (sliding ? act_.window_rope_cos : act_.rope_cos).as<float>();
  const float* sin = (sliding ? act_.window_rope_sin : act_.rope_sin).as<float>();
  if (Status s = step(cuda::rope(q, tokens, c.n_head, c.head_dim, n_rot, neox, cos, sin, stream_)); !s) return s;
  if (Status s = step(cuda::rope(k, tokens, c.n_head_kv, c.head_dim, n_rot, neox, cos, sin, stream_)); !s) return s;

  if (params_.kv_offload) {
    const LayerCache& cache = caches_[il - split_.first_layer];
    const cuda::KvLayerView kview{cache.k.get(),
                                  type_id(params_.type_k),
                                  static_cast<int>(c.n_head_kv),
                                  static_cast<int>(c.head_dim),
                                  params_.n_cells,
                                  gpu_kv_head_bytes(params_.type_k, c.head_dim)};
    const cuda::KvLayerView vview{cache.v.get(),
                                  type_id(params_.type_v),
                                  static_cast<int>(c.n_head_kv),
                                  static_cast<int>(c.head_dim_v),
                                  params_.n_cells,
                                  gpu_kv_head_bytes(params_.type_v, c.head_dim_v)};
    const auto* cells = act_.cells.as<uint32_t>();
    if (Status s = step(cuda::store_kv(k, tokens, cells, kview, stream_)); !s) return s;
    if (Status s = step(cuda::store_kv(v, tokens, cells, vview, stream_)); !s) return s;
    const cuda::AttentionKeys keys{(sliding ? act_.window_key_offset : act_.key_offset).as<int32_t>(),
                                   (sliding ? act_.window_n_keys : act_.n_keys).as<int32_t>(),
                                   act_.key_cells.as<uint32_t>()};
    const float scale = c.attention_score_scale();
    if (Status s = step(cuda::attention(q, tokens, c.n_head, kview, vview, keys, scale, c.attn_logit_softcap,
                                        act_.attn.as<float>(), stream_));
        !s) {
      return s;
    }
  } else if (Status s = attention_on_cpu(pass, batch, il, n); !s) {
    return s;
  }

  if (Status s = linear(l.o, act_.attn.as<float>(), n, proj); !s) return s;
  if (Status s = post_norm(l.attn_post_norm, proj, tokens, where); !s) return s;
  if (Status s = step(cuda::add(x, proj, tokens * c.n_embd, stream_)); !s) return s;
  if (Status s = step(cuda::rms_norm(x, l.ffn_norm.as<float>(), c.rms_eps, tokens, c.n_embd, xn, stream_)); !s)
    return s;
  if (Status s = linear(l.gate, xn, n, gate); !s) return s;
  if (Status s = linear(l.up, xn, n, act_.up.as<float>()); !s) return s;
  // gemma's feed-forward gates with GELU, the others with SiLU (the CPU's geglu_ffn and swiglu_ffn).
  const auto gated = is_gemma_arch(c.arch) ? cuda::gelu_mul : cuda::silu_mul;
  if (Status s = step(gated(gate, act_.up.as<float>(), tokens * c.n_ff, gate, stream_)); !s) return s;
  if (Status s = linear(l.down, gate, n, proj); !s) return s;
  if (Status s = post_norm(l.ffn_post_norm, proj, tokens, where); !s) return s;
  return step(cuda::add(x, proj, tokens * c.n_embd, stream_));
}

// gemma3's norm of a sub-layer's output before the residual add; nothing for a model without one.
Status GpuSegment::post_norm(const DeviceBuffer& gain, float* y, int64_t tokens, const std::string& where) {
  if (gain.get() == nullptr) return {};
  const ModelConfig& c = model_->config();
  return cuda_status(cuda::rms_norm(y, gain.as<float>(), c.rms_eps, tokens, c.n_embd, y, stream_), where);
}

// --no-kv-offload: q, k and v come down, the CPU cache stores K/V and runs attention, the result goes up.
Status GpuSegment::attention_on_cpu(const ForwardPass& pass, const ForwardBatch& batch, uint32_t il, size_t n) {
  const ModelConfig& c = model_->config();
  const BlockActivations a = block_activations(pass.scratch, c, n);
  const std::string what = fmt::format("layer {}: moving attention's inputs to the CPU", il);
  for (auto [dst, src] : {std::pair{a.q, act_.q.get()}, std::pair{a.k, act_.k.get()}, std::pair{a.v, act_.v.get()}}) {
    if (Status s = cuda_status(cuda::copy_to_host(dst.data(), src, dst.size_bytes(), stream_), what); !s) return s;
  }
  store_kv(pass.cache, il, batch.kv, n, a.k, a.v);
  if (Status s = causal_attention(pass.threads, pass.cache, il, c, batch.kv, n, a.q, a.attn, pass.scratch.attention);
      !s) {
    return s;
  }
  return cuda_status(cuda::copy_to_device(act_.attn.get(), a.attn.data(), a.attn.size_bytes(), stream_),
                     fmt::format("layer {}: moving attention's output to the GPU", il));
}

Status GpuSegment::output_forward(const ForwardBatch& batch) {
  const ModelConfig& c = model_->config();
  const auto n_out = static_cast<int64_t>(batch.output_rows.size());
  if (n_out == 0) return {};
  float* xn = act_.xn.as<float>();
  const std::string where = "the output layer on the GPU";
  if (Status s = cuda_status(
          cuda::gather_rows(act_.x.as<float>(), act_.output_rows.as<uint32_t>(), n_out, c.n_embd, xn, stream_), where);
      !s) {
    return s;
  }
  if (Status s = cuda_status(
          cuda::rms_norm(xn, weights_->output_norm().as<float>(), c.rms_eps, n_out, c.n_embd, xn, stream_), where);
      !s) {
    return s;
  }
  if (Status s = linear(weights_->output(), xn, static_cast<size_t>(n_out), act_.logits.as<float>()); !s) return s;
  if (c.final_logit_softcap != 0) {
    if (Status s = cuda_status(
            cuda::soft_cap(act_.logits.as<float>(), n_out * c.n_vocab, c.final_logit_softcap, stream_), where);
        !s) {
      return s;
    }
  }
  return cuda_status(cuda::copy_to_host(batch.logits.data(), act_.logits.get(),
                                        static_cast<size_t>(n_out) * c.n_vocab * sizeof(float), stream_),
                     "copying the logits from the GPU");
}

Status GpuSegment::forward(const ForwardPass& pass, const ForwardBatch& batch, std::span<float> x) {
  const ModelConfig& c = model_->config();
  const size_t n = batch.tokens.size();
  if (n > params_.max_tokens) {
    return fail("a ubatch of {} tokens on the GPU, which was set up for {} (-ub)", n, params_.max_tokens);
  }
  if (Status s = cuda_status(cuda::set_device(device_), "selecting the GPU"); !s) return s;
  if (Status s = upload_ubatch(pass, batch, n); !s) return s;
  const size_t x_bytes = n * c.n_embd * sizeof(float);
  if (Status s = cuda_status(cuda::copy_to_device(act_.x.get(), x.data(), x_bytes, stream_), "moving x to the GPU");
      !s) {
    return s;
  }
  for (uint32_t il = split_.first_layer; il < split_.end_layer; ++il) {
    if (Status s = layer_forward(pass, batch, il, n); !s) return s;
  }
  if (split_.output) return output_forward(batch);
  return cuda_status(cuda::copy_to_host(x.data(), act_.x.get(), x_bytes, stream_), "moving x back from the GPU");
}

}  // namespace infertune
