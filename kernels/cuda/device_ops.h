#pragma once
// The GPU kernels of a transformer block, launched on a stream over device pointers. Plain C++ (no CUDA
// headers): the engine calls these from code that builds without the toolkit. Each returns a CUDA error
// code (0: success; device_runtime.h's error_text names it). Row-major everywhere: a matrix of n_rows rows
// of n_cols values; activations are [n_tokens][width] float32.
#include <cstddef>
#include <cstdint>

namespace infertune::cuda {

// Weight types with GPU kernels (ggml's type ids: kernels/ggml_type.h).
bool weight_type_supported(uint32_t type_id);
// KV cache types the GPU reads and writes: f32, f16, bf16, q8_0, q4_0.
bool kv_type_supported(uint32_t type_id);

// The most tokens matvec takes at once; larger batches go through gemm_* on dequantized weights.
inline constexpr int64_t kMatvecMaxTokens = 8;

// y[t][r] = sum_c W[r][c] * x[t][c] for t < n_tokens <= kMatvecMaxTokens, with W in its GGUF block
// layout (`type_id`), decoded on the fly: one weight read per step, the memory-bound case.
int matvec(uint32_t type_id, const void* w, int64_t n_rows, int64_t n_cols, const float* x, int64_t n_tokens, float* y,
           void* stream);

// W decoded to f16 [n_rows][n_cols] (out), for the batched product.
int dequantize_to_f16(uint32_t type_id, const void* w, int64_t n_rows, int64_t n_cols, void* out, void* stream);
// The int8 path of the batched product (linear_int8.cu), for the weight types with an integer form (every
// quantized one; not F32, F16, BF16): the activations x [n_tokens][n_cols] quantized per 32 values
// (xq: int8 [n_tokens][n_cols], xd: float [n_tokens][n_cols / 32]), then y[t][r] (row t at y + t * ldy) =
// x * W^T from the weights' own integers (dp4a), f32 accumulation.
bool int8_form_supported(uint32_t type_id);
int quantize_activations_q8(const float* x, int64_t n_tokens, int64_t n_cols, int8_t* xq, float* xd, void* stream);
int gemm_int8(uint32_t type_id, const void* w, int64_t n_rows, int64_t n_cols, const int8_t* xq, const float* xd,
              int64_t n_tokens, float* y, int64_t ldy, void* stream);
// out[i] = f16(x[i]), i < n.
int convert_to_f16(const float* x, int64_t n, void* out, void* stream);
// y[t][r] (row t at y + t * ldy) = x [n_tokens][n_cols] * W^T with cuBLAS; f16 operands, f32 accumulation
// and result. ldy > n_rows writes a slice of columns of a wider y (a matrix decoded in row slices).
int gemm_f16(void* blas, const void* w_f16, int64_t n_rows, int64_t n_cols, const void* x_f16, int64_t n_tokens,
             float* y, int64_t ldy);
// The same for f32 weights and activations (exact f32 arithmetic, no TF32).
int gemm_f32(void* blas, const float* w, int64_t n_rows, int64_t n_cols, const float* x, int64_t n_tokens, float* y,
             int64_t ldy);

// out[t] = x[t] / sqrt(mean(x[t]^2) + eps) * gain; x, out: [n_rows][width]; out may alias x.
int rms_norm(const float* x, const float* gain, float eps, int64_t n_rows, int64_t width, float* out, void* stream);
// x[i] += y[i].
int add(float* x, const float* y, int64_t n, void* stream);
// x[t][j] += bias[j]; x: [n_rows][width].
int add_bias(float* x, const float* bias, int64_t n_rows, int64_t width, void* stream);
// out[i] = silu(gate[i]) * up[i]; out may alias gate.
int silu_mul(const float* gate, const float* up, int64_t n, float* out, void* stream);
// out[i] = gelu(gate[i]) * up[i] (tanh approximation), evaluated as the CPU's gelu_mul (kernels/ops/gelu.h):
// through half precision, so that the GPU and CPU layers agree; out may alias gate.
int gelu_mul(const float* gate, const float* up, int64_t n, float* out, void* stream);
// x[i] = cap * tanh(x[i] / cap): the soft cap of gemma's logits.
int soft_cap(float* x, int64_t n, float cap, void* stream);
// Rotates the first n_rot values of every head of x [n_tokens][n_heads * head_dim] by token t's angles
// cos/sin [n_tokens][n_rot / 2] (computed on the host, every scaling mode included). neox: pairs
// (i, i + n_rot / 2); otherwise (2i, 2i + 1).
int rope(float* x, int64_t n_tokens, int n_heads, int head_dim, int n_rot, bool neox, const float* cos,
         const float* sin, void* stream);
// out[i] = x[rows[i]], rows of `width` floats, i < n_out.
int gather_rows(const float* x, const uint32_t* rows, int64_t n_out, int64_t width, float* out, void* stream);

// One layer's K or V cache on the device: [n_head_kv][n_cells][head_bytes], each head row encoded in `type_id`.
struct KvLayerView {
  void* data = nullptr;
  uint32_t type_id = 0;
  int n_head_kv = 0;
  int head_dim = 0;
  int64_t n_cells = 0;
  size_t head_bytes = 0;
};

// Encodes src [n_tokens][n_head_kv * head_dim] into cell cells[t] of every head of `cache`.
int store_kv(const float* src, int64_t n_tokens, const uint32_t* cells, const KvLayerView& cache, void* stream);

// What each query token attends to: the cells key_cells[offset[t] .. offset[t] + n_keys[t]).
struct AttentionKeys {
  const int32_t* offset = nullptr;  // [n_tokens]
  const int32_t* n_keys = nullptr;  // [n_tokens]
  const uint32_t* key_cells = nullptr;
};

// Causal attention of q [n_tokens][n_head * k.head_dim] over the cached keys and values: query head h
// reads KV head h / (n_head / n_head_kv); scores scaled by `scale`, then soft-capped to softcap * tanh(s / softcap)
// when softcap is not 0 (gemma2); a single pass with a running maximum (flash attention), so memory does not grow
// with the context. out: [n_tokens][n_head * v.head_dim].
int attention(const float* q, int64_t n_tokens, int n_head, const KvLayerView& k, const KvLayerView& v,
              const AttentionKeys& keys, float scale, float softcap, float* out, void* stream);

// Device memory bandwidth: reads and writes `bytes` with a copy kernel `repeats` times; GB/s counting
// bytes read plus bytes written.
int measure_copy_bandwidth(size_t bytes, int repeats, double* gbps);

// The speed of matvec on an n_rows x n_cols matrix of `type_id` (pseudo-random weights, streamed from
// memory: the matrix is copied often enough that L2 cannot hold it): weight bytes read per second, in GB/s,
// over `repeats` launches. generic_kernel times the one-warp-per-row kernel that every type has instead of
// the fast kernel of the common types. A measurement for people (tests print it); nothing depends on it.
int time_matvec(uint32_t type_id, int64_t n_rows, int64_t n_cols, int n_tokens, int repeats, double* gbps,
                bool generic_kernel = false);
// The speed of a prompt's batched product of n_tokens activations with an n_rows x n_cols matrix of
// `type_id`: the f16 path (decoded slices, cuBLAS) or the int8 path (quantized activations, gemm_int8), in
// TFLOP/s counting 2 * rows * cols * tokens operations, over `repeats` runs after a warm-up. For people
// (tests print it); nothing depends on it.
int time_batched(uint32_t type_id, int64_t n_rows, int64_t n_cols, int n_tokens, int repeats, bool int8,
                 double* tflops);
// Device f16 tensor throughput: an n x n x n cuBLAS GEMM (f16 operands, f32 accumulation and result, as
// gemm_f16) `repeats` times after a warm-up; TFLOP/s counting 2 n^3 operations per product. Needs 8 n^2 bytes.
int measure_gemm_tflops(int n, int repeats, double* tflops);

}  // namespace infertune::cuda
