#pragma once
// Tiled matmul for prompt batches: a register tile of R weight rows x (NV vectors of kLanes tokens). Each
// thread walks its rows R at a time; their blocks are decoded once into a per-thread buffer (unsigned codes
// in value order, block scales and offset coefficients), then every token tile of the activation panels
// (QuantizedActivations) is multiplied against them:
//
//   for each 4-value group g:   x[v] = panel codes of group g for the tokens of vector v  (one 32-bit lane
//                                      per token, the same 4 values of each)
//                               for each row r: w = its 4 codes of group g, broadcast to every lane
//                                               acc[r][v] += dot4(w, x[v])   (u8 x s8, summed in int32)
//
// so the accumulators' lanes are tokens: a block's integer sum, its integer offset terms (from the panels'
// integer code sums), one FMA with (row scale x the tokens' scales, a vector load) and, for formats with a
// float min, one more, serve all tokens of a vector. Weight bytes are unpacked once per matmul per row, not
// once per token. Each lane computes exactly what the matrix-vector kernels compute for one row and token
// (the same integers, the same FMAs in the same order: see x86_q8_formats.h, x86_k_formats.h), so results
// do not depend on the batch a token is in.
//
// The vector width and tile shape come from the unit's `Tile` policy (V below):
//   V::I / V::F                      int32 / float vectors of V::kLanes lanes (8: ymm, 16: zmm)
//   V::kRows, V::kVecs               R and NV of the register tile
//   zero(), load(p), bcast(p)        codes: kLanes * 4 bytes at p; 4 bytes at p in every lane
//   dot(acc, u, s)                   acc + per-lane sums of 4 products u8 * s8
//   mul_add(acc, a, k)               acc + a * k (int32)
//   madd_acc(acc, a, b)              acc + per-lane a.lo * b.lo + a.hi * b.hi (int16 halves)
//   zerof(), loadf(p), set1f(v), cvt(i), mul(a, b), fma(a, b, c), storef(p, f)
//   abs8(v), sign8(x, w)             only for units whose formats may have signed codes (F::kSigned<Isa>)
//
// Included ONLY after an ISA unit's `#pragma GCC target` (see x86_dot_kernels.h).
#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/matmul/avx2/x86_interleaved_kernels.h"
#include "kernels/matmul/avx2/x86_k_formats.h"
#include "kernels/matmul/avx2/x86_q8_formats.h"
#include "kernels/matmul/avx2/x86_simd_helpers.h"
#include "kernels/matmul/decode_buffer.h"
#include "kernels/matmul/interleaved_rows.h"
#include "kernels/matmul/matmul.h"
#include "kernels/matmul/quantized_activations.h"

namespace infertune::x86 {
namespace {

// R decoded weight rows (a short last tile repeats its last row; those results are not stored).
template <int R>
struct DecodedRows {
  const uint8_t* codes[R];   // unsigned (or signed, per F::kSigned) codes in value order, 4 per 32-bit word, a row's
                             // word g at codes[r] + word_stride * g
  const float* d[R];         // [n_cols / 32] block scales (32-value formats), [n_cols / 256] (K formats)
  const float* off[R];       // 32-value formats with a min: [n_cols / 32] m; K formats: [n_cols / 256] -dmin
  const int32_t* scales[R];  // K formats: [n_cols / kSub] integer sub-block scales
  const int32_t* coefs[R];   // K formats: [n_cols / kPairValues] offset coefficient pairs
  size_t word_stride;        // 4 (a row's codes contiguous) or kGroupWordStride (an interleaved group's words)
};

template <int R>
void repeat_last_row(DecodedRows<R>& rows, size_t nr) {
  for (size_t r = nr; r < R; ++r) {
    rows.codes[r] = rows.codes[nr - 1];
    rows.d[r] = rows.d[nr - 1];
    rows.off[r] = rows.off[nr - 1];
    rows.scales[r] = rows.scales[nr - 1];
    rows.coefs[r] = rows.coefs[nr - 1];
  }
}

// The activations of NV vectors of kLanes tokens: codes at group 0 (group g is 64 g bytes further), per-item
// numbers at item 0 (item i is 16 i further): scales per block; q8: float and integer block sums; q8k: the
// int16 pairs of code sums (pairs16 or pairs32, as the format wants).
template <int NV>
struct TokenTile {
  const int8_t* codes[NV];
  const float* scales[NV];
  const float* sums[NV];
  const int32_t* isums[NV];
};

// Tokens [t0, t0 + NV * lanes) of the q8 panels, or of the q8k panels with pairs of `pair_values` (32, 64).
template <int NV>
TokenTile<NV> token_tile(const QuantizedActivations& a, bool k, size_t pair_values, size_t t0, size_t lanes) {
  TokenTile<NV> tile;
  for (int v = 0; v < NV; ++v) {
    const size_t t = t0 + v * lanes;
    const ActivationPanel panel = k ? a.q8k_panel(t / kPanelTokens) : a.q8_panel(t / kPanelTokens);
    const size_t lane = t % kPanelTokens;
    tile.codes[v] = panel.codes + 4 * lane;
    tile.scales[v] = panel.scales + lane;
    tile.sums[v] = k ? nullptr : panel.sums + lane;
    tile.isums[v] = (k ? (pair_values == 64 ? panel.pairs32 : panel.pairs16) : panel.isums) + lane;
  }
  return tile;
}

// Part i of n of the cache lines of [p, p + bytes) into L1. The next rows' weights are fetched this way, a
// part per token tile, while the current ones compute: decoding touches each weight byte once in a short
// burst, which the hardware prefetchers do not see coming.
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
// Per block b, per lane:  I = dot(codes, x) + kCodeOffset * S;  acc = fma(I, d * dx, acc);
// with a min (Q4_1, Q5_1) then  acc = fma(m, dx * S, acc).

// out[r][token] = sum over nb blocks of row r against the tile's tokens.
template <class V, class F, bool kSigned, int kCodeOffset, size_t kStride, int R, int NV>
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
        const typename V::I wb = V::bcast(w.codes[r] + kStride * (8 * b + k));
        for (int v = 0; v < NV; ++v) isum[r][v] = dot4<V, kSigned>(isum[r][v], wb, xv[v]);
      }
    }
    for (int v = 0; v < NV; ++v) {
      const typename V::F dx = V::loadf(x.scales[v] + 16 * b);
      if constexpr (kCodeOffset != 0) {
        const typename V::I sums = V::load(reinterpret_cast<const int8_t*>(x.isums[v] + 16 * b));
        for (int r = 0; r < R; ++r) isum[r][v] = V::mul_add(isum[r][v], sums, kCodeOffset);
      }
      for (int r = 0; r < R; ++r) {
        acc[r][v] = V::fma(V::cvt(isum[r][v]), V::mul(V::set1f(w.d[r][b]), dx), acc[r][v]);
      }
      if constexpr (F::kHasMin) {
        const typename V::F sums = V::loadf(x.sums[v] + 16 * b);
        for (int r = 0; r < R; ++r) acc[r][v] = V::fma(V::set1f(w.off[r][b]), sums, acc[r][v]);
      }
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < NV; ++v) V::storef(out[r] + v * V::kLanes, acc[r][v]);
  }
}

// A per-thread row for the decoded rows that no tile takes.
inline DecodedRowOut decode_sink(size_t n_cols) {
  thread_local DecodeBuffer sink;
  sink.reserve(1, n_cols);
  return {sink.codes(), sink.d(), sink.off(), sink.scales(), sink.coefs()};
}

// Rows [r0, r0 + nr) of an interleaved matrix decoded into rows[0..nr) (unpack(group block, block index, its words,
// outs) for each of n_blocks blocks of block_bytes and block_words words). Returns the stride at which the tiles read
// a row's words: when the range is whole groups of 8, the group words stay where the group's 8 rows' codes are
// (kGroupWordStride; rows[r].codes moves to its column); else (a caller that cut a group) every touched group is
// decoded into a per-thread buffer and its rows' words copied out in value order (stride 4).
template <class Unpack>
size_t decode_interleaved_rows(const uint8_t* weights, size_t row_bytes, size_t r0, size_t nr, size_t n_blocks,
                               size_t block_bytes, size_t block_words, DecodedRowOut* rows, Unpack unpack) {
  const size_t n_cols = n_blocks * block_words * 4;
  // The group words of a group whose 8 rows' codes start at `codes` (8 n_cols bytes).
  const auto group_words = [&](uint8_t* codes) { return GroupWords{{codes, codes + 4 * n_cols}}; };
  const auto row_column = [&](const GroupWords& w, size_t q) { return w.half[q / 4] + 4 * (q % 4); };
  if (r0 % kInterleavedRows == 0 && nr % kInterleavedRows == 0) {
    for (size_t g = 0; g < nr; g += kInterleavedRows) {
      const GroupWords words = group_words(rows[g].codes);  // the group's rows are contiguous in the buffer
      LaneOuts out;
      for (size_t q = 0; q < kInterleavedRows; ++q) {
        out[q] = rows[g + q];
        rows[g + q].codes = row_column(words, q);
      }
      const uint8_t* group = weights + (r0 + g) * row_bytes;
      for (size_t b = 0; b < n_blocks; ++b) unpack(group + b * block_bytes, b, words.advanced(b * block_words), out);
    }
    return kGroupWordStride;
  }
  thread_local std::vector<uint8_t> buffer;
  buffer.resize(kInterleavedRows * n_cols);
  const GroupWords words = group_words(buffer.data());
  const DecodedRowOut sink = decode_sink(n_cols);
  for (size_t group = r0 / kInterleavedRows * kInterleavedRows; group < r0 + nr; group += kInterleavedRows) {
    LaneOuts out;
    for (size_t q = 0; q < kInterleavedRows; ++q) {
      out[q] = group + q >= r0 && group + q < r0 + nr ? rows[group + q - r0] : sink;
    }
    for (size_t b = 0; b < n_blocks; ++b) {
      unpack(weights + group * row_bytes + b * block_bytes, b, words.advanced(b * block_words), out);
    }
    for (size_t q = 0; q < kInterleavedRows; ++q) {
      if (out[q].codes == sink.codes) continue;
      const uint8_t* column = row_column(words, q);
      for (size_t w = 0; w < n_cols / 4; ++w) std::memcpy(out[q].codes + 4 * w, column + kGroupWordStride * w, 4);
    }
  }
  return 4;
}

// When the tokens' codes exceed kBlockBytes (128 tokens of an 8192-value row are 1 MiB: more than L2), rows
// are taken kGroupTiles row tiles at a time and decoded once, and the tokens swept in blocks of about
// kBlockBytes, each block across all tiles of the group, so that a block stays in L2 while every row of the
// group uses it.
inline constexpr size_t kGroupTiles = 4;
inline constexpr size_t kBlockBytes = 256 * 1024;

// The tiles of R rows over decoded rows outs[0..n) whose words are word_stride bytes apart (a short last tile
// repeats its last row).
template <int R>
void tiles_of(const DecodedRowOut* outs, size_t n, size_t word_stride, DecodedRows<R>* tiles) {
  for (size_t i = 0; i * R < n; ++i) {
    tiles[i].word_stride = word_stride;
    const size_t nr = std::min<size_t>(R, n - i * R);
    for (size_t r = 0; r < nr; ++r) {
      const DecodedRowOut& o = outs[i * R + r];
      tiles[i].codes[r] = o.codes;
      tiles[i].d[r] = o.d;
      tiles[i].off[r] = o.off;
      tiles[i].scales[r] = o.scales;
      tiles[i].coefs[r] = o.coefs;
    }
    repeat_last_row(tiles[i], nr);
  }
}

// Decodes rows [r0, r0 + nr) (at most kGroupTiles tiles) of 32-value format F into buf and `tiles`.
template <class Isa, class F, int R>
void decode_rows_q8(const uint8_t* weights, size_t row_bytes, WeightLayout layout, size_t r0, size_t nr, size_t n_cols,
                    DecodeBuffer& buf, DecodedRows<R>* tiles) {
  const size_t nb = n_cols / 32;
  DecodedRowOut outs[kGroupTiles * R];
  for (size_t r = 0; r < nr; ++r) {
    outs[r] = {buf.codes() + r * n_cols, buf.d() + r * nb, buf.off() + r * nb, nullptr, nullptr};
  }
  if constexpr (kInterleaves<Isa, F>) {
    if (layout == WeightLayout::interleaved8) {
      const size_t stride = decode_interleaved_rows(weights, row_bytes, r0, nr, nb, interleaved_q8_block_bytes<F>(), 8,
                                                    outs, interleaved_unpack<Isa, F>());
      return tiles_of(outs, nr, stride, tiles);
    }
  }
  tiles_of(outs, nr, 4, tiles);
  for (size_t r = 0; r < nr; ++r) {
    const uint8_t* row = weights + (r0 + r) * row_bytes;
    uint8_t* codes = outs[r].codes;
    float* d = outs[r].d;
    float* off = outs[r].off;
    for (size_t b = 0; b < nb; ++b) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(codes + 32 * b), F::template codes<Isa>(row + b * F::kBytes));
    }
    size_t b = 0;
    if constexpr (!kCustomScale<F>) {
      for (; b + 8 <= nb; b += 8) {  // f16 scales (and mins) of 8 blocks in one conversion
        const uint8_t* blk = row + b * F::kBytes;
        _mm256_storeu_ps(d + b, halves8<F::kBytes>(blk));
        if constexpr (F::kHasMin) _mm256_storeu_ps(off + b, halves8<F::kBytes>(blk + 2));
      }
    }
    for (; b < nb; ++b) {
      d[b] = block_scale<F>(row + b * F::kBytes);
      if constexpr (F::kHasMin) off[b] = half_at(row + b * F::kBytes + 2);
    }
  }
}

// ---- K formats (256-value super-blocks) -----------------------------------------------------------------
// Per super-block, per lane: I = sum_j scale_j * dot_j(codes, x) (+ kFold * P), acc = fma(I, d * dx, acc),
// then for formats with a min acc = fma(P, -dmin * dx, acc); P = sum of coefficient pairs x the panel's
// code-sum pairs (VPMADDWD / VPDPWSSD).

template <class V, class F, bool kSigned, size_t kPairValues, int kFold, size_t kStride, int R, int NV>
void tile_q8k(const DecodedRows<R>& w, const TokenTile<NV>& x, size_t nsb, float (&out)[R][NV * V::kLanes]) {
  constexpr int kSubs = 256 / F::kSub;
  constexpr int kSteps = F::kSub / 4;
  constexpr bool kMin = F::kDminOffset >= 0;
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
          const typename V::I wb = V::bcast(w.codes[r] + kStride * (g0 + k));
          for (int v = 0; v < NV; ++v) isub[r][v] = dot4<V, kSigned>(isub[r][v], wb, xv[v]);
        }
      }
      for (int r = 0; r < R; ++r) {
        const int32_t scale = w.scales[r][sb * kSubs + j];
        for (int v = 0; v < NV; ++v) isum[r][v] = V::mul_add(isum[r][v], isub[r][v], scale);
      }
    }
    typename V::I pairs[R][NV];
    if constexpr (kPairValues != 0) {
      constexpr int kPairs = 256 / kPairValues;
      for (int r = 0; r < R; ++r) {
        for (int v = 0; v < NV; ++v) pairs[r][v] = V::zero();
      }
      for (int i = 0; i < kPairs; ++i) {
        for (int v = 0; v < NV; ++v) {
          const typename V::I sums = V::load(reinterpret_cast<const int8_t*>(x.isums[v] + 16 * (sb * kPairs + i)));
          for (int r = 0; r < R; ++r) {
            pairs[r][v] = V::madd_acc(pairs[r][v], sums, V::set1(w.coefs[r][sb * kPairs + i]));
          }
        }
      }
      if constexpr (!kMin) {
        for (int r = 0; r < R; ++r) {
          for (int v = 0; v < NV; ++v) isum[r][v] = V::mul_add(isum[r][v], pairs[r][v], kFold);
        }
      }
    }
    for (int v = 0; v < NV; ++v) {
      const typename V::F dx = V::loadf(x.scales[v] + 16 * sb);
      for (int r = 0; r < R; ++r) {
        acc[r][v] = V::fma(V::cvt(isum[r][v]), V::mul(V::set1f(w.d[r][sb]), dx), acc[r][v]);
        if constexpr (kMin) acc[r][v] = V::fma(V::cvt(pairs[r][v]), V::mul(V::set1f(w.off[r][sb]), dx), acc[r][v]);
      }
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < NV; ++v) V::storef(out[r] + v * V::kLanes, acc[r][v]);
  }
}

// Decodes rows [r0, r0 + nr) (at most kGroupTiles tiles) of K format F into buf and `tiles`.
template <class Isa, class F, int R>
void decode_rows_q8k(const uint8_t* weights, size_t row_bytes, WeightLayout layout, size_t r0, size_t nr, size_t n_cols,
                     DecodeBuffer& buf, DecodedRows<R>* tiles) {
  constexpr size_t kSubs = 256 / F::kSub;
  constexpr size_t kPairs = F::template kPairValues<Isa> ? 256 / F::template kPairValues<Isa> : 8;
  const size_t nsb = n_cols / 256;
  DecodedRowOut outs[kGroupTiles * R];
  for (size_t r = 0; r < nr; ++r) {
    outs[r] = {buf.codes() + r * n_cols, buf.d() + r * nsb, buf.off() + r * nsb, buf.scales() + r * nsb * kSubs,
               buf.coefs() + r * nsb * kPairs};
  }
  if constexpr (kInterleaves<Isa, F>) {
    if (layout == WeightLayout::interleaved8) {
      const size_t stride = decode_interleaved_rows(weights, row_bytes, r0, nr, nsb, interleaved_k_block_bytes<F>(), 64,
                                                    outs, interleaved_unpack<Isa, F>());
      return tiles_of(outs, nr, stride, tiles);
    }
  }
  tiles_of(outs, nr, 4, tiles);
  for (size_t r = 0; r < nr; ++r) {
    for (size_t sb = 0; sb < nsb; ++sb) {
      F::template unpack<Isa>(weights + (r0 + r) * row_bytes + sb * F::kBytes, outs[r].codes + 256 * sb,
                              outs[r].scales + kSubs * sb, outs[r].coefs + kPairs * sb, outs[r].d[sb], outs[r].off[sb]);
    }
  }
}

// ---- the row loop -----------------------------------------------------------------------------------------
// The two format families as the loop sees them: decode<R>(...) a group of row tiles, compute<R, NV>(...) one tile.

template <class Isa, class F>
struct Q8Tiles {
  template <int R>
  static void decode(const uint8_t* weights, size_t row_bytes, WeightLayout layout, size_t r0, size_t nr, size_t n_cols,
                     DecodeBuffer& buf, DecodedRows<R>* tiles) {
    decode_rows_q8<Isa, F, R>(weights, row_bytes, layout, r0, nr, n_cols, buf, tiles);
  }
  template <int R, int NV>
  static void compute(const DecodedRows<R>& rows, const QuantizedActivations& a, size_t t0, size_t n_cols,
                      float (&out)[R][NV * Isa::Tile::kLanes]) {
    const TokenTile<NV> x = token_tile<NV>(a, false, 0, t0, Isa::Tile::kLanes);
    constexpr bool kSigned = F::template kSigned<Isa>;
    constexpr int kOffset = F::template kCodeOffset<Isa>;
    if constexpr (kInterleaves<Isa, F>) {
      if (rows.word_stride == kGroupWordStride) {
        return tile_q8<typename Isa::Tile, F, kSigned, kOffset, kGroupWordStride, R, NV>(rows, x, n_cols / 32, out);
      }
    }
    tile_q8<typename Isa::Tile, F, kSigned, kOffset, 4, R, NV>(rows, x, n_cols / 32, out);
  }
};

template <class Isa, class F>
struct Q8kTiles {
  template <int R>
  static void decode(const uint8_t* weights, size_t row_bytes, WeightLayout layout, size_t r0, size_t nr, size_t n_cols,
                     DecodeBuffer& buf, DecodedRows<R>* tiles) {
    decode_rows_q8k<Isa, F, R>(weights, row_bytes, layout, r0, nr, n_cols, buf, tiles);
  }
  template <int R, int NV>
  static void compute(const DecodedRows<R>& rows, const QuantizedActivations& a, size_t t0, size_t n_cols,
                      float (&out)[R][NV * Isa::Tile::kLanes]) {
    constexpr bool kSigned = F::template kSigned<Isa>;
    constexpr size_t kPairValues = F::template kPairValues<Isa>;
    constexpr int kFold = F::template kFold<Isa>;
    const TokenTile<NV> x = token_tile<NV>(a, true, kPairValues, t0, Isa::Tile::kLanes);
    if constexpr (kInterleaves<Isa, F>) {
      if (rows.word_stride == kGroupWordStride) {
        return tile_q8k<typename Isa::Tile, F, kSigned, kPairValues, kFold, kGroupWordStride, R, NV>(rows, x,
                                                                                                     n_cols / 256, out);
      }
    }
    tile_q8k<typename Isa::Tile, F, kSigned, kPairValues, kFold, 4, R, NV>(rows, x, n_cols / 256, out);
  }
};

// Rows [row_begin, row_end) of the problem from the panels of `a`, format family `Tiles`.
template <class Isa, class Tiles>
void matmul_tiled(const MatmulProblem& p, const QuantizedActivations& a, size_t row_begin, size_t row_end) {
  using V = typename Isa::Tile;
  constexpr int R = V::kRows, NV = V::kVecs, L = V::kLanes;
  constexpr size_t T = NV * L;  // tokens per tile
  static_assert(NV == 1 || NV == 2);
  thread_local DecodeBuffer buf;
  buf.reserve(kGroupTiles * R, p.n_cols);
  const size_t row_bytes = p.weights.size() / p.n_rows;
  const uint8_t* weights = weight_bytes(p);
  const size_t block_tokens = std::max(T, kBlockBytes / p.n_cols / T * T);
  const size_t token_tiles = (p.n_tokens + T - 1) / T;
  // When all tokens are one block, a group of one tile keeps its decoded rows in L1; interleaved weights are decoded
  // a group of 8 rows at a time (each code vector unpacked once for its 8 rows).
  const size_t min_rows = p.layout == WeightLayout::interleaved8 ? kInterleavedRows : R;
  const size_t group_size = p.n_tokens > block_tokens ? kGroupTiles * R : std::max<size_t>(min_rows, R);
  for (size_t g0 = row_begin; g0 < row_end; g0 += group_size) {
    const size_t group_rows = std::min(group_size, row_end - g0);
    const size_t n_tiles = (group_rows + R - 1) / R;
    DecodedRows<R> tiles[kGroupTiles];
    Tiles::template decode<R>(weights, row_bytes, p.layout, g0, group_rows, p.n_cols, buf, tiles);
    // The next group's weights, a part per tile computed.
    const uint8_t* next = weights + (g0 + group_rows) * row_bytes;
    const size_t next_bytes = std::min(group_size, row_end - g0 - group_rows) * row_bytes;
    size_t step = 0;
    for (size_t tb = 0; tb < p.n_tokens; tb += block_tokens) {
      const size_t tb_end = std::min(p.n_tokens, tb + block_tokens);
      for (size_t i = 0; i < n_tiles; ++i) {
        const size_t r0 = g0 + i * R;
        const size_t nr = std::min<size_t>(R, group_rows - i * R);
        for (size_t t0 = tb; t0 < tb_end; t0 += T) {
          prefetch_part(next, next_bytes, step++, n_tiles * token_tiles);
          const size_t nt = std::min(T, p.n_tokens - t0);
          if (NV == 1 || nt > L) {
            float out[R][T];
            Tiles::template compute<R, NV>(tiles[i], a, t0, p.n_cols, out);
            store_tile(out, nr, nt, p.y + t0 * p.n_rows + r0, p.n_rows);
          } else {  // at most one vector of tokens left
            float out[R][L];
            Tiles::template compute<R, 1>(tiles[i], a, t0, p.n_cols, out);
            store_tile(out, nr, nt, p.y + t0 * p.n_rows + r0, p.n_rows);
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace infertune::x86
