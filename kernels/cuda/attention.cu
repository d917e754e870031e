// The KV cache and attention on the GPU: encoding new keys and values into their cells (f32, f16, bf16,
// q8_0, q4_0: kv_encode.h, the CPU reference encoders' bytes) and causal attention over the cached cells with
// a running softmax maximum (flash attention: one pass, memory independent of the context length).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cfloat>

#include "kernels/cuda/block_decode.h"
#include "kernels/cuda/device_ops.h"
#include "kernels/cuda/kv_encode.h"

namespace infertune::cuda {
namespace {

constexpr int kBlock = 32;         // values per KV block (and per decoded piece)
constexpr int kAttnThreads = 128;  // one thread per key of a chunk, and per output value
constexpr int kMaxHeadDim = 256;   // the largest head the attention kernel takes
constexpr int kStoreThreads = 128;

cudaStream_t as_stream(void* s) { return static_cast<cudaStream_t>(s); }
unsigned blocks_for(int64_t n, int threads) { return static_cast<unsigned>((n + threads - 1) / threads); }

__device__ __forceinline__ uint8_t* head_row(const KvLayerView& c, int head, int64_t cell) {
  return static_cast<uint8_t*>(c.data) + (static_cast<int64_t>(head) * c.n_cells + cell) * c.head_bytes;
}

// ---- encoding (one thread per 32-value block of one head of one token) ----

template <BlockType T>
__global__ void store_kv_kernel(const float* src, int64_t n_tokens, const uint32_t* cells, KvLayerView cache) {
  const int blocks_per_head = cache.head_dim / kBlock;
  const int64_t g = static_cast<int64_t>(blockIdx.x) * kStoreThreads + threadIdx.x;
  if (g >= n_tokens * cache.n_head_kv * blocks_per_head) return;
  const int b = static_cast<int>(g % blocks_per_head);
  const int head = static_cast<int>((g / blocks_per_head) % cache.n_head_kv);
  const int64_t t = g / blocks_per_head / cache.n_head_kv;
  const float* x = src + (t * cache.n_head_kv + head) * cache.head_dim + b * kBlock;
  encode_kv_block<T>(x, head_row(cache, head, cells[t]) + b * kv_block_bytes(T));
}

// ---- attention ----

template <BlockType T>
__device__ __forceinline__ float kv_element(const uint8_t* row, int i) {
  if constexpr (T == BlockType::F32) {
    return reinterpret_cast<const float*>(row)[i];
  } else if constexpr (T == BlockType::F16) {
    return __half2float(reinterpret_cast<const __half*>(row)[i]);
  } else if constexpr (T == BlockType::BF16) {
    return __bfloat162float(reinterpret_cast<const __nv_bfloat16*>(row)[i]);
  } else if constexpr (T == BlockType::Q8_0) {
    const uint8_t* block = row + (i / kBlock) * 34;
    __half d;
    memcpy(&d, block, 2);
    return static_cast<float>(static_cast<int8_t>(block[2 + i % kBlock])) * __half2float(d);
  } else {  // Q4_0: value j of a block is the low nibble of byte j (j < 16) or the high one of byte j - 16
    const uint8_t* block = row + (i / kBlock) * 18;
    __half d;
    memcpy(&d, block, 2);
    const int j = i % kBlock;
    const int code = j < kBlock / 2 ? (block[2 + j] & 0xF) : (block[2 + j - kBlock / 2] >> 4);
    return static_cast<float>(code - 8) * __half2float(d);
  }
}

template <class Op>
__device__ float block_reduce(float v, float* scratch, Op op) {
  for (int offset = 16; offset > 0; offset /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  float r = scratch[0];
  for (int i = 1; i < kAttnThreads / 32; ++i) r = op(r, scratch[i]);
  __syncthreads();
  return r;
}

struct MaxOp {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct SumOp {
  __device__ float operator()(float a, float b) const { return a + b; }
};

// One thread block per (token, query head). Keys are taken in chunks of kAttnThreads: each thread scores
// one key, the chunk's maximum rescales what was accumulated so far, and each thread then accumulates
// the weighted values of its output dimensions over the chunk.
template <BlockType K, BlockType V>
__global__ void attention_kernel(const float* q, int n_head, KvLayerView k, KvLayerView v, AttentionKeys keys,
                                 float scale, float softcap, float* out) {
  __shared__ float query[kMaxHeadDim];
  __shared__ float weight[kAttnThreads];
  __shared__ uint32_t cell_of[kAttnThreads];
  __shared__ float reduce_scratch[kAttnThreads / 32];

  const int64_t t = blockIdx.x / n_head;
  const int h = blockIdx.x % n_head;
  const int kv_head = h / (n_head / k.n_head_kv);
  const int tid = threadIdx.x;
  for (int i = tid; i < k.head_dim; i += kAttnThreads) query[i] = q[(t * n_head + h) * k.head_dim + i];
  __syncthreads();

  const int n = keys.n_keys[t];
  const uint32_t* key_cells = keys.key_cells + keys.offset[t];
  constexpr int kPerThread = kMaxHeadDim / kAttnThreads;
  float acc[kPerThread] = {};
  float running_max = -FLT_MAX;
  float running_sum = 0.0f;
  for (int c0 = 0; c0 < n; c0 += kAttnThreads) {
    const int j = c0 + tid;
    float score = -FLT_MAX;
    if (j < n) {
      const uint32_t cell = key_cells[j];
      cell_of[tid] = cell;
      const uint8_t* row = head_row(k, kv_head, cell);
      float piece[kBlock];
      float dot = 0.0f;
      for (int p = 0; p < k.head_dim / kBlock; ++p) {
        decode_piece<K>(row, p, piece);
#pragma unroll
        for (int i = 0; i < kBlock; ++i) dot += piece[i] * query[p * kBlock + i];
      }
      score = dot * scale;
      if (softcap != 0.0f) score = softcap * tanhf(score * (1.0f / softcap));
    }
    const float chunk_max = block_reduce(score, reduce_scratch, MaxOp{});
    const float new_max = fmaxf(running_max, chunk_max);
    const float rescale = expf(running_max - new_max);
    const float w = j < n ? expf(score - new_max) : 0.0f;
    weight[tid] = w;
    running_sum = running_sum * rescale + block_reduce(w, reduce_scratch, SumOp{});  // syncs: weight[] is ready
    const int in_chunk = min(kAttnThreads, n - c0);
#pragma unroll
    for (int r = 0; r < kPerThread; ++r) {
      const int d = tid + r * kAttnThreads;
      if (d >= v.head_dim) break;
      float a = acc[r] * rescale;
      for (int jj = 0; jj < in_chunk; ++jj) a += weight[jj] * kv_element<V>(head_row(v, kv_head, cell_of[jj]), d);
      acc[r] = a;
    }
    running_max = new_max;
    __syncthreads();  // weight[] and cell_of[] are rewritten by the next chunk
  }
  const float inv = running_sum > 0.0f ? 1.0f / running_sum : 0.0f;
#pragma unroll
  for (int r = 0; r < kPerThread; ++r) {
    const int d = tid + r * kAttnThreads;
    if (d < v.head_dim) out[(t * n_head + h) * v.head_dim + d] = acc[r] * inv;
  }
}

}  // namespace

bool kv_type_supported(uint32_t type_id) {
  return visit_kv_type(type_id, [](auto) {});
}

int store_kv(const float* src, int64_t n_tokens, const uint32_t* cells, const KvLayerView& cache, void* stream) {
  if (n_tokens == 0) return 0;
  if (cache.head_dim % kBlock != 0) return cudaErrorInvalidValue;
  const int64_t n = n_tokens * cache.n_head_kv * (cache.head_dim / kBlock);
  const bool known = visit_kv_type(cache.type_id, [&](auto tag) {
    store_kv_kernel<decltype(tag)::value>
        <<<blocks_for(n, kStoreThreads), kStoreThreads, 0, as_stream(stream)>>>(src, n_tokens, cells, cache);
  });
  if (!known) return cudaErrorInvalidValue;
  return cudaGetLastError();
}

int attention(const float* q, int64_t n_tokens, int n_head, const KvLayerView& k, const KvLayerView& v,
              const AttentionKeys& keys, float scale, float softcap, float* out, void* stream) {
  if (n_tokens == 0) return 0;
  if (k.head_dim > kMaxHeadDim || v.head_dim > kMaxHeadDim || k.head_dim % kBlock != 0 || k.n_head_kv == 0 ||
      n_head % k.n_head_kv != 0 || !kv_type_supported(v.type_id)) {
    return cudaErrorInvalidValue;
  }
  const auto grid = static_cast<unsigned>(n_tokens * n_head);
  const bool known = visit_kv_type(k.type_id, [&](auto k_tag) {
    visit_kv_type(v.type_id, [&](auto v_tag) {
      attention_kernel<decltype(k_tag)::value, decltype(v_tag)::value>
          <<<grid, kAttnThreads, 0, as_stream(stream)>>>(q, n_head, k, v, keys, scale, softcap, out);
    });
  });
  if (!known) return cudaErrorInvalidValue;
  return cudaGetLastError();
}

}  // namespace infertune::cuda
