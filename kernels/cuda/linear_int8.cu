// The int8 path of the batched weight products (llama.cpp's MMQ idea): the activations are quantized to
// int8 on the GPU, 32 values per scale; the weights are read in their integer form (block_decode_int8.h);
// each 16-value half of a piece is an integer dot product (dp4a: four int8 products per instruction) and one
// float multiply-add of the scales. No f16 copy of the weights is made, and the integer work is exact: the
// only roundings are the activations' quantization and the float accumulation.
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/block_decode_int8.h"
#include "kernels/cuda/device_ops.h"

namespace infertune::cuda {
namespace {

constexpr int kPiece = 32;
constexpr int kTileRows = 64;    // weight rows per thread block
constexpr int kTileTokens = 64;  // tokens per thread block
constexpr int kTilePieces = 4;   // pieces per step along the rows
constexpr int kThreads = 256;
constexpr int kTokensPerThread = kTileTokens * kTileRows / kThreads;  // 16: one row, 16 tokens each
constexpr int kWords = kPiece / 4;                                    // int8x4 words per piece

static_assert(kTileRows * kTilePieces == kThreads, "one weight piece decoded per thread and step");
static_assert(kTileTokens * kTilePieces == kThreads, "one activation piece loaded per thread and step");

cudaStream_t as_stream(void* s) { return static_cast<cudaStream_t>(s); }

// One thread per piece of 32 activations: d = max|x| / 127, q = round(x / d).
__global__ void quantize_q8_kernel(const float* x, int64_t n_pieces, int8_t* xq, float* xd) {
  const int64_t g = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (g >= n_pieces) return;
  const float4* v = reinterpret_cast<const float4*>(x + g * kPiece);
  float values[kPiece];
  float amax = 0.0f;
#pragma unroll
  for (int i = 0; i < kPiece / 4; ++i) {
    const float4 f = v[i];
    values[4 * i] = f.x, values[4 * i + 1] = f.y, values[4 * i + 2] = f.z, values[4 * i + 3] = f.w;
    amax = fmaxf(amax, fmaxf(fmaxf(fabsf(f.x), fabsf(f.y)), fmaxf(fabsf(f.z), fabsf(f.w))));
  }
  const float d = amax / 127.0f;
  const float inverse = d > 0.0f ? 1.0f / d : 0.0f;
  int* out = reinterpret_cast<int*>(xq + g * kPiece);
#pragma unroll
  for (int w = 0; w < kWords; ++w) {
    uint32_t word = 0;
#pragma unroll
    for (int b = 0; b < 4; ++b) {
      const int q = __float2int_rn(values[4 * w + b] * inverse);
      word |= static_cast<uint32_t>(static_cast<uint8_t>(static_cast<int8_t>(q))) << (8 * b);
    }
    out[w] = static_cast<int>(word);
  }
  xd[g] = d;
}

struct Tile {
  // Weights, the row innermost so that a warp's 32 rows read 32 banks.
  int wq[kTilePieces][kWords][kTileRows];
  float scale[kTilePieces][2][kTileRows];
  float offset[kTilePieces][2][kTileRows];
  // Activations, read by a whole warp at once (broadcast); each token's row padded by one word so that
  // the 32 tokens a warp loads write 32 banks.
  int xq[kTileTokens][kTilePieces * kWords + 1];
  float xd[kTileTokens][kTilePieces + 1];
  int xsum[kTileTokens][2 * kTilePieces + 1];  // sum of the q of each half: [2 * piece + half]
};

__device__ __forceinline__ int pack_word(const int8_t* q) {
  return static_cast<int>(static_cast<uint32_t>(static_cast<uint8_t>(q[0])) |
                          (static_cast<uint32_t>(static_cast<uint8_t>(q[1])) << 8) |
                          (static_cast<uint32_t>(static_cast<uint8_t>(q[2])) << 16) |
                          (static_cast<uint32_t>(static_cast<uint8_t>(q[3])) << 24));
}

// Decodes weight piece `piece` of tile row `r` (zeros outside the matrix) into the tile.
template <BlockType T>
__device__ void load_weights(Tile& tile, const uint8_t* w, int64_t n_rows, int64_t n_pieces, uint64_t row_bytes,
                             int64_t row0, int64_t k0) {
  const int r = threadIdx.x % kTileRows;
  const int p = threadIdx.x / kTileRows;
  const int64_t row = row0 + r;
  const int64_t piece = k0 + p;
  IntPiece form;
  if (row < n_rows && piece < n_pieces) {
    decode_piece_int8<T>(w + row * row_bytes, piece, form);
  } else {
#pragma unroll
    for (int j = 0; j < kPiece; ++j) form.q[j] = 0;
    form.scale[0] = form.scale[1] = form.offset[0] = form.offset[1] = 0.0f;
  }
#pragma unroll
  for (int i = 0; i < kWords; ++i) tile.wq[p][i][r] = pack_word(form.q + 4 * i);
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    tile.scale[p][h][r] = form.scale[h];
    tile.offset[p][h][r] = form.offset[h];
  }
}

// Loads activation piece `piece` of tile token `t` (zeros outside the batch) and the sums of its halves.
__device__ void load_activations(Tile& tile, const int8_t* xq, const float* xd, int64_t n_tokens, int64_t n_pieces,
                                 int64_t token0, int64_t k0) {
  const int t = threadIdx.x % kTileTokens;
  const int p = threadIdx.x / kTileTokens;
  const int64_t token = token0 + t;
  const int64_t piece = k0 + p;
  int words[kWords] = {};
  float d = 0.0f;
  if (token < n_tokens && piece < n_pieces) {
    const int4* src = reinterpret_cast<const int4*>(xq + (token * n_pieces + piece) * kPiece);
    const int4 a = src[0], b = src[1];
    words[0] = a.x, words[1] = a.y, words[2] = a.z, words[3] = a.w;
    words[4] = b.x, words[5] = b.y, words[6] = b.z, words[7] = b.w;
    d = xd[token * n_pieces + piece];
  }
  int sums[2] = {0, 0};
#pragma unroll
  for (int i = 0; i < kWords; ++i) {
    tile.xq[t][p * kWords + i] = words[i];
    sums[i / (kWords / 2)] = __dp4a(words[i], 0x01010101, sums[i / (kWords / 2)]);
  }
  tile.xd[t][p] = d;
  tile.xsum[t][2 * p] = sums[0];
  tile.xsum[t][2 * p + 1] = sums[1];
}

// y[t][r] = sum over pieces and halves of xd * (scale * dot(wq, xq) + offset * sum(xq)): a tile of 64 rows by
// 64 tokens per thread block, each thread one row and 16 tokens (a warp: 32 rows, the same tokens).
template <BlockType T>
__global__ void __launch_bounds__(kThreads)
    gemm_int8_kernel(const uint8_t* w, int64_t n_rows, int64_t n_pieces, uint64_t row_bytes, const int8_t* xq,
                     const float* xd, int64_t n_tokens, float* y, int64_t ldy) {
  __shared__ Tile tile;
  const int64_t row0 = static_cast<int64_t>(blockIdx.x) * kTileRows;
  const int64_t token0 = static_cast<int64_t>(blockIdx.y) * kTileTokens;
  const int r = threadIdx.x % kTileRows;
  const int t0 = (threadIdx.x / kTileRows) * kTokensPerThread;
  float acc[kTokensPerThread] = {};
  for (int64_t k0 = 0; k0 < n_pieces; k0 += kTilePieces) {
    load_weights<T>(tile, w, n_rows, n_pieces, row_bytes, row0, k0);
    load_activations(tile, xq, xd, n_tokens, n_pieces, token0, k0);
    __syncthreads();
#pragma unroll 1
    for (int p = 0; p < kTilePieces; ++p) {
      int wq[kWords];
#pragma unroll
      for (int i = 0; i < kWords; ++i) wq[i] = tile.wq[p][i][r];
      const float s0 = tile.scale[p][0][r], s1 = tile.scale[p][1][r];
      const float o0 = tile.offset[p][0][r], o1 = tile.offset[p][1][r];
#pragma unroll
      for (int j = 0; j < kTokensPerThread; ++j) {
        const int t = t0 + j;
        int d0 = 0, d1 = 0;
#pragma unroll
        for (int i = 0; i < kWords / 2; ++i) {
          d0 = __dp4a(wq[i], tile.xq[t][p * kWords + i], d0);
          d1 = __dp4a(wq[i + kWords / 2], tile.xq[t][p * kWords + i + kWords / 2], d1);
        }
        const float half_sums = s0 * static_cast<float>(d0) + s1 * static_cast<float>(d1) +
                                o0 * static_cast<float>(tile.xsum[t][2 * p]) +
                                o1 * static_cast<float>(tile.xsum[t][2 * p + 1]);
        acc[j] += tile.xd[t][p] * half_sums;
      }
    }
    __syncthreads();
  }
  const int64_t row = row0 + r;
  if (row >= n_rows) return;
#pragma unroll
  for (int j = 0; j < kTokensPerThread; ++j) {
    const int64_t token = token0 + t0 + j;
    if (token < n_tokens) y[token * ldy + row] = acc[j];
  }
}

unsigned blocks_for(int64_t n, int per_block) { return static_cast<unsigned>((n + per_block - 1) / per_block); }

}  // namespace

bool int8_form_supported(uint32_t type_id) {
  bool has = false;
  visit_block_type(type_id, [&](auto tag) { has = has_int8_form<decltype(tag)::value>(); });
  return has;
}

int quantize_activations_q8(const float* x, int64_t n_tokens, int64_t n_cols, int8_t* xq, float* xd, void* stream) {
  if (n_cols % kPiece != 0 || n_tokens < 0) return cudaErrorInvalidValue;
  const int64_t n_pieces = n_tokens * (n_cols / kPiece);
  if (n_pieces == 0) return cudaSuccess;
  constexpr int kQuantizeThreads = 128;
  quantize_q8_kernel<<<blocks_for(n_pieces, kQuantizeThreads), kQuantizeThreads, 0, as_stream(stream)>>>(x, n_pieces,
                                                                                                         xq, xd);
  return cudaGetLastError();
}

int gemm_int8(uint32_t type_id, const void* w, int64_t n_rows, int64_t n_cols, const int8_t* xq, const float* xd,
              int64_t n_tokens, float* y, int64_t ldy, void* stream) {
  if (n_cols % kPiece != 0 || !int8_form_supported(type_id) || n_tokens < 1 || ldy < n_rows) {
    return cudaErrorInvalidValue;
  }
  const uint64_t rb = row_bytes(type_id, n_cols);
  const auto* bytes = static_cast<const uint8_t*>(w);
  const dim3 grid(blocks_for(n_rows, kTileRows), blocks_for(n_tokens, kTileTokens));
  visit_block_type(type_id, [&](auto tag) {
    constexpr BlockType T = decltype(tag)::value;
    if constexpr (has_int8_form<T>()) {
      gemm_int8_kernel<T>
          <<<grid, kThreads, 0, as_stream(stream)>>>(bytes, n_rows, n_cols / kPiece, rb, xq, xd, n_tokens, y, ldy);
    }
  });
  return cudaGetLastError();
}

}  // namespace infertune::cuda
