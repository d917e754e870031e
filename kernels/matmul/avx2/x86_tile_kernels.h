#pragma once
// Tiled matmul for prompt batches: a register tile of R weight rows x (NV vectors of kLanes tokens). Each
// thread walks its rows R at a time; their blocks are decoded once into a per-thread buffer (unsigned codes
// in value order, block scales and offsets), then every token tile of the activation panels
// (QuantizedActivations) is multiplied against them:
//
//   for each 4-value group g:   x[v] = panel codes of group g for the tokens of vector v  (one 32-bit lane
//                                      per token, the same 4 values of each)
//                               for each row r: w = its 4 codes of group g, broadcast to every lane
//                                               acc[r][v] += dot4(w, x[v])   (u8 x s8, summed in int32)
//
// so the accumulators' lanes are tokens, one block's int32 sums are scaled for all tokens of a vector by
// one FMA (row scale x the tokens' scales, a vector load), and block offsets likewise. Weight bytes are
// unpacked once per matmul per row, not once per token.
//
// The vector width and tile shape come from the unit's `Tile` policy (V below):
//   V::I / V::F                      int32 / float vectors of V::kLanes lanes (8: ymm, 16: zmm)
//   V::kRows, V::kVecs               R and NV of the register tile
//   zero(), load(p), bcast(p)        codes: kLanes * 4 bytes at p; 4 bytes at p in every lane
//   dot(acc, u, s)                   acc + per-lane sums of 4 products u8 * s8
//   mul_add(acc, a, k)               acc + a * k (int32)
//   zerof(), loadf(p), set1f(v), cvt(i), mul(a, b), fma(a, b, c), storef(p, f)
//   abs8(v), sign8(x, w)             only for units whose formats may have signed codes (F::kSigned<Isa>)
// Weight formats come as traits (x86_q8_formats.h for the 32-value formats, the K formats in
// x86_dot_kernels.h).
//
// Included ONLY after an ISA unit's `#pragma GCC target` (see x86_dot_kernels.h).
#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "kernels/matmul/avx2/x86_q8_formats.h"
#include "kernels/matmul/avx2/x86_simd_helpers.h"
#include "kernels/matmul/decode_buffer.h"
#include "kernels/matmul/matmul.h"
#include "kernels/matmul/quantized_activations.h"

namespace infertune::x86 {
namespace {

// R decoded weight rows (a short last tile repeats its last row; those results are not stored).
template <int R>
struct DecodedRows {
  const uint8_t* codes[R];   // [n_cols] unsigned codes in value order
  const float* d[R];         // [n_cols / 32] block scales (32-value formats), [n_cols / 256] (K formats)
  const float* off[R];       // offset coefficients, one per block or per offset group of the format
  const int32_t* scales[R];  // K formats: [n_cols / kSub] integer sub-block scales
};

template <int R>
void repeat_last_row(DecodedRows<R>& rows, size_t nr) {
  for (size_t r = nr; r < R; ++r) {
    rows.codes[r] = rows.codes[nr - 1];
    rows.d[r] = rows.d[nr - 1];
    rows.off[r] = rows.off[nr - 1];
    rows.scales[r] = rows.scales[nr - 1];
  }
}

// The activations of NV vectors of kLanes tokens: codes at group 0 (group g is 64 g bytes further),
// per-block scales and sums at block 0 (block b is 16 b floats further).
template <int NV>
struct TokenTile {
  const int8_t* codes[NV];
  const float* scales[NV];
  const float* sums[NV];
};

// Tokens [t0, t0 + NV * lanes) of the q8 (`k` false) or q8k panels; sums: per block (q8), per 16 or 32
// values (q8k, `sums32`).
template <int NV>
TokenTile<NV> token_tile(const QuantizedActivations& a, bool k, bool sums32, size_t t0, size_t lanes) {
  TokenTile<NV> tile;
  for (int v = 0; v < NV; ++v) {
    const size_t t = t0 + v * lanes;
    const ActivationPanel panel = k ? a.q8k_panel(t / kPanelTokens) : a.q8_panel(t / kPanelTokens);
    const size_t lane = t % kPanelTokens;
    tile.codes[v] = panel.codes + 4 * lane;
    tile.scales[v] = panel.scales + lane;
    tile.sums[v] = (sums32 ? panel.sums32 : panel.sums) + lane;
  }
  return tile;
}

// Part i of n of the cache lines of [p, p + bytes) into L2. The next row tile's weights are fetched this
// way, a part per token tile, while the current tile computes: decoding touches each weight byte once in
// a short burst, which the hardware prefetchers do not see coming.
inline void prefetch_part(const uint8_t* p, size_t bytes, size_t i, size_t n) {
  const size_t lines = (bytes + 63) / 64;
  for (size_t l = lines * i / n; l < lines * (i + 1) / n; ++l) {
    _mm_prefetch(reinterpret_cast<const char*>(p + 64 * l), _MM_HINT_T0);
  }
}

// Writes out[r][t] to y[t][r] for r < nr, t < nt (y: this tile's corner of [n_tokens][n_rows]).
template <int R, int kTokens>
void store_tile(const float (&out)[R][kTokens], size_t nr, size_t nt, float* y, size_t n_rows) {
  for (size_t t = 0; t < nt; ++t) {
    for (size_t r = 0; r < nr; ++r) y[t * n_rows + r] = out[r][t];
  }
}

// acc + per-lane dot of 4 weight codes (w, the same in every lane) with 4 activation codes; signed codes
// go through the sign trick: |w| * sign(x, w) (only units whose Tile has abs8 / sign8 run them).
template <class V, bool kSigned>
inline typename V::I dot4(typename V::I acc, typename V::I w, typename V::I x) {
  if constexpr (kSigned) {
    return V::dot(acc, V::abs8(w), V::sign8(x, w));
  } else {
    return V::dot(acc, w, x);
  }
}

// ---- 32-value formats -----------------------------------------------------------------------------------

// out[r][token] = sum over nb blocks of row r against the tile's tokens.
template <class V, bool kSigned, int R, int NV>
void tile_q8(const DecodedRows<R>& w, const TokenTile<NV>& x, size_t nb, float (&out)[R][NV * V::kLanes]) {
  typename V::F acc[R][NV];
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < NV; ++v) acc[r][v] = V::zerof();
  }
  for (size_t b = 0; b < nb; ++b) {
    typename V::I isum[R][NV];
    for (int r = 0; r < R; ++r) {
      for (int v = 0; v < NV; ++v) isum[r][v] = V::zero();
    }
#pragma GCC unroll 8
    for (int k = 0; k < 8; ++k) {
      typename V::I xv[NV];
      for (int v = 0; v < NV; ++v) xv[v] = V::load(x.codes[v] + (8 * b + k) * 64);
      for (int r = 0; r < R; ++r) {
        const typename V::I wb = V::bcast(w.codes[r] + 32 * b + 4 * k);
        for (int v = 0; v < NV; ++v) isum[r][v] = dot4<V, kSigned>(isum[r][v], wb, xv[v]);
      }
    }
    for (int v = 0; v < NV; ++v) {
      const typename V::F dx = V::loadf(x.scales[v] + 16 * b);
      const typename V::F sums = V::loadf(x.sums[v] + 16 * b);
      for (int r = 0; r < R; ++r) {
        acc[r][v] = V::fma(V::cvt(isum[r][v]), V::mul(V::set1f(w.d[r][b]), dx), acc[r][v]);
        acc[r][v] = V::fma(V::set1f(w.off[r][b]), sums, acc[r][v]);
      }
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < NV; ++v) V::storef(out[r] + v * V::kLanes, acc[r][v]);
  }
}

// Decodes rows [r0, r0 + nr) of 32-value format F into buf.
template <class Isa, class F, int R>
DecodedRows<R> decode_rows_q8(const uint8_t* weights, size_t row_bytes, size_t r0, size_t nr, size_t n_cols,
                              DecodeBuffer& buf) {
  const size_t nb = n_cols / 32;
  DecodedRows<R> rows;
  for (size_t r = 0; r < nr; ++r) {
    const uint8_t* row = weights + (r0 + r) * row_bytes;
    uint8_t* codes = buf.codes() + r * n_cols;
    float* d = buf.d() + r * nb;
    float* off = buf.off() + r * nb;
    for (size_t b = 0; b < nb; ++b) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(codes + 32 * b), F::template codes<Isa>(row + b * F::kBytes));
    }
    size_t b = 0;
    for (; b + 8 <= nb; b += 8) {  // scales and offsets of 8 blocks in one conversion
      const uint8_t* blk = row + b * F::kBytes;
      const __m256 scales = halves8<F::kBytes>(blk);
      _mm256_storeu_ps(d + b, scales);
      _mm256_storeu_ps(off + b, F::kHasMin ? halves8<F::kBytes>(blk + 2)
                                           : _mm256_mul_ps(scales, _mm256_set1_ps(F::template kOffsetFactor<Isa>)));
    }
    for (; b < nb; ++b) F::template scale_one<Isa>(row + b * F::kBytes, d[b], off[b]);
    rows.codes[r] = codes;
    rows.d[r] = d;
    rows.off[r] = off;
    rows.scales[r] = nullptr;
  }
  repeat_last_row(rows, nr);
  return rows;
}

// Rows [row_begin, row_end) of a 32-value-format matmul from the q8 panels of `a`.
template <class Isa, class F>
void matmul_tiled_q8(const MatmulProblem& p, const QuantizedActivations& a, size_t row_begin, size_t row_end) {
  using V = typename Isa::Tile;
  constexpr int R = V::kRows, NV = V::kVecs, L = V::kLanes;
  static_assert(NV == 1 || NV == 2);
  thread_local DecodeBuffer buf;
  buf.reserve(R, p.n_cols);
  const size_t nb = p.n_cols / 32;
  const size_t row_bytes = p.weights.size() / p.n_rows;
  const uint8_t* weights = weight_bytes(p);
  for (size_t r0 = row_begin; r0 < row_end; r0 += R) {
    const size_t nr = std::min<size_t>(R, row_end - r0);
    const DecodedRows<R> rows = decode_rows_q8<Isa, F, R>(weights, row_bytes, r0, nr, p.n_cols, buf);
    const uint8_t* next = weights + (r0 + nr) * row_bytes;
    const size_t next_bytes = std::min<size_t>(R, row_end - r0 - nr) * row_bytes;
    const size_t n_tiles = (p.n_tokens + NV * L - 1) / (NV * L);
    for (size_t t0 = 0; t0 < p.n_tokens; t0 += NV * L) {
      const size_t nt = std::min<size_t>(NV * L, p.n_tokens - t0);
      prefetch_part(next, next_bytes, t0 / (NV * L), n_tiles);
      if (NV == 1 || nt > L) {
        float out[R][NV * L];
        tile_q8<V, F::template kSigned<Isa>, R, NV>(rows, token_tile<NV>(a, false, false, t0, L), nb, out);
        store_tile(out, nr, nt, p.y + t0 * p.n_rows + r0, p.n_rows);
      } else {  // at most one vector of tokens left
        float out[R][L];
        tile_q8<V, F::template kSigned<Isa>, R, 1>(rows, token_tile<1>(a, false, false, t0, L), nb, out);
        store_tile(out, nr, nt, p.y + t0 * p.n_rows + r0, p.n_rows);
      }
    }
  }
}

// ---- K formats (256-value super-blocks) -----------------------------------------------------------------
// F::kSub values per sub-block scale (16 or 32), F::kOffGroup values per offset coefficient (16, 32; 0: no
// offsets).

template <class V, class F, bool kSigned, int R, int NV>
void tile_q8k(const DecodedRows<R>& w, const TokenTile<NV>& x, size_t nsb, float (&out)[R][NV * V::kLanes]) {
  constexpr int kSubs = 256 / F::kSub;
  constexpr int kSteps = F::kSub / 4;
  typename V::F acc[R][NV];
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < NV; ++v) acc[r][v] = V::zerof();
  }
  for (size_t sb = 0; sb < nsb; ++sb) {
    typename V::I isum[R][NV];
    for (int r = 0; r < R; ++r) {
      for (int v = 0; v < NV; ++v) isum[r][v] = V::zero();
    }
    for (int j = 0; j < kSubs; ++j) {
      typename V::I isub[R][NV];
      for (int r = 0; r < R; ++r) {
        for (int v = 0; v < NV; ++v) isub[r][v] = V::zero();
      }
      const size_t g0 = 64 * sb + kSteps * j;  // first 4-value group of the sub-block
#pragma GCC unroll 8
      for (int k = 0; k < kSteps; ++k) {
        typename V::I xv[NV];
        for (int v = 0; v < NV; ++v) xv[v] = V::load(x.codes[v] + (g0 + k) * 64);
        for (int r = 0; r < R; ++r) {
          const typename V::I wb = V::bcast(w.codes[r] + 4 * (g0 + k));
          for (int v = 0; v < NV; ++v) isub[r][v] = dot4<V, kSigned>(isub[r][v], wb, xv[v]);
        }
      }
      for (int r = 0; r < R; ++r) {
        const int32_t scale = w.scales[r][sb * kSubs + j];
        for (int v = 0; v < NV; ++v) isum[r][v] = V::mul_add(isum[r][v], isub[r][v], scale);
      }
    }
    for (int v = 0; v < NV; ++v) {
      const typename V::F dx = V::loadf(x.scales[v] + 16 * sb);
      for (int r = 0; r < R; ++r) {
        acc[r][v] = V::fma(V::cvt(isum[r][v]), V::mul(V::set1f(w.d[r][sb]), dx), acc[r][v]);
      }
    }
    if constexpr (F::kOffGroup != 0) {
      constexpr int kOffs = 256 / F::kOffGroup;
      for (int o = 0; o < kOffs; ++o) {
        for (int v = 0; v < NV; ++v) {
          const typename V::F sums = V::loadf(x.sums[v] + 16 * (sb * kOffs + o));
          for (int r = 0; r < R; ++r) acc[r][v] = V::fma(V::set1f(w.off[r][sb * kOffs + o]), sums, acc[r][v]);
        }
      }
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < NV; ++v) V::storef(out[r] + v * V::kLanes, acc[r][v]);
  }
}

// Decodes rows [r0, r0 + nr) of K format F into buf.
template <class Isa, class F, int R>
DecodedRows<R> decode_rows_q8k(const uint8_t* weights, size_t row_bytes, size_t r0, size_t nr, size_t n_cols,
                               DecodeBuffer& buf) {
  constexpr size_t kSubs = 256 / F::kSub;
  constexpr size_t kOffs = F::kOffGroup ? 256 / F::kOffGroup : 0;
  const size_t nsb = n_cols / 256;
  DecodedRows<R> rows;
  for (size_t r = 0; r < nr; ++r) {
    const uint8_t* row = weights + (r0 + r) * row_bytes;
    uint8_t* codes = buf.codes() + r * n_cols;
    float* d = buf.d() + r * nsb;
    float* off = buf.off() + r * nsb * kOffs;
    int32_t* scales = buf.scales() + r * nsb * kSubs;
    for (size_t sb = 0; sb < nsb; ++sb) {
      F::template unpack<Isa>(row + sb * F::kBytes, codes + 256 * sb, scales + kSubs * sb, d[sb], off + kOffs * sb);
    }
    rows.codes[r] = codes;
    rows.d[r] = d;
    rows.off[r] = off;
    rows.scales[r] = scales;
  }
  repeat_last_row(rows, nr);
  return rows;
}

// Rows [row_begin, row_end) of a K-format matmul from the q8k panels of `a`.
template <class Isa, class F>
void matmul_tiled_q8k(const MatmulProblem& p, const QuantizedActivations& a, size_t row_begin, size_t row_end) {
  using V = typename Isa::Tile;
  constexpr int R = V::kRows, NV = V::kVecs, L = V::kLanes;
  static_assert(NV == 1 || NV == 2);
  constexpr bool kSums32 = F::kOffGroup == 32;
  thread_local DecodeBuffer buf;
  buf.reserve(R, p.n_cols);
  const size_t nsb = p.n_cols / 256;
  const size_t row_bytes = p.weights.size() / p.n_rows;
  const uint8_t* weights = weight_bytes(p);
  for (size_t r0 = row_begin; r0 < row_end; r0 += R) {
    const size_t nr = std::min<size_t>(R, row_end - r0);
    const DecodedRows<R> rows = decode_rows_q8k<Isa, F, R>(weights, row_bytes, r0, nr, p.n_cols, buf);
    const uint8_t* next = weights + (r0 + nr) * row_bytes;
    const size_t next_bytes = std::min<size_t>(R, row_end - r0 - nr) * row_bytes;
    const size_t n_tiles = (p.n_tokens + NV * L - 1) / (NV * L);
    for (size_t t0 = 0; t0 < p.n_tokens; t0 += NV * L) {
      const size_t nt = std::min<size_t>(NV * L, p.n_tokens - t0);
      prefetch_part(next, next_bytes, t0 / (NV * L), n_tiles);
      if (NV == 1 || nt > L) {
        float out[R][NV * L];
        tile_q8k<V, F, F::template kSigned<Isa>, R, NV>(rows, token_tile<NV>(a, true, kSums32, t0, L), nsb, out);
        store_tile(out, nr, nt, p.y + t0 * p.n_rows + r0, p.n_rows);
      } else {
        float out[R][L];
        tile_q8k<V, F, F::template kSigned<Isa>, R, 1>(rows, token_tile<1>(a, true, kSums32, t0, L), nsb, out);
        store_tile(out, nr, nt, p.y + t0 * p.n_rows + r0, p.n_rows);
      }
    }
  }
}

}  // namespace
}  // namespace infertune::x86
