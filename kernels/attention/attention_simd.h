#pragma once
// The SIMD attention kernels, written once over an ISA policy `I` (vector type, loads, fused multiply-add,
// reductions, exp, and loads that widen f16 / bf16 / int8 to floats). Included ONLY by an ISA unit
// (attention_avx2.cpp, attention_avx512.cpp) after its `#pragma GCC target`; the anonymous namespace gives
// each unit its own copy, compiled for its ISA. The algorithms are those of attention_reference.cpp:
// decode a tile of key / value rows once for every query of the problem, then vector dot products, an
// exp over the score arrays and weighted sums of value rows.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/attention/attention.h"
#include "kernels/attention/attention_reference.h"
#include "kernels/half.h"

namespace infertune::attention_simd {
namespace {

constexpr uint32_t kTile = kAttentionKeyTile;
constexpr int kQuantBlock = 32;      // values per q8_0 / q4_0 block
constexpr size_t kQ8Bytes = 2 + 32;  // f16 scale + 32 int8
constexpr size_t kQ4Bytes = 2 + 16;  // f16 scale + 16 bytes of nibbles

// The f16 block scale at p (F16C: this unit is compiled with it).
inline float half_at(const std::byte* p) {
  uint16_t bits;
  std::memcpy(&bits, p, 2);
  return _cvtsh_ss(bits);
}

// ---- row decoding ------------------------------------------------------------------------------------

// f16 (brain = false) or bf16 (brain = true) values to floats, two vectors per step.
template <class I, bool brain>
void decode_halfs(const std::byte* src, uint32_t dim, float* dst) {
  const auto* h = reinterpret_cast<const uint16_t*>(src);
  constexpr uint32_t W = I::kWidth;
  uint32_t d = 0;
  for (; d + 2 * W <= dim; d += 2 * W) {
    I::store(dst + d, brain ? I::load_bf16(h + d) : I::load_f16(h + d));
    I::store(dst + d + W, brain ? I::load_bf16(h + d + W) : I::load_f16(h + d + W));
  }
  for (; d + W <= dim; d += W) I::store(dst + d, brain ? I::load_bf16(h + d) : I::load_f16(h + d));
  for (; d < dim; ++d) {
    uint16_t bits;
    std::memcpy(&bits, h + d, 2);
    dst[d] = brain ? bf16_to_f32(bf16_t{bits}) : _cvtsh_ss(bits);
  }
}

// 32 int8 codes times the block scale.
template <class I>
void decode_block_i8(const int8_t* codes, float scale, float* dst) {
  const typename I::V s = I::set1(scale);
  for (int j = 0; j < kQuantBlock; j += I::kWidth) I::store(dst + j, I::mul(s, I::load_i8(codes + j)));
}

template <class I>
void decode_q8_0(const std::byte* src, uint32_t dim, float* dst) {
  for (uint32_t b = 0; b < dim / kQuantBlock; ++b, src += kQ8Bytes, dst += kQuantBlock) {
    decode_block_i8<I>(reinterpret_cast<const int8_t*>(src + 2), half_at(src), dst);
  }
}

template <class I>
void decode_q4_0(const std::byte* src, uint32_t dim, float* dst) {
  alignas(32) int8_t codes[kQuantBlock];
  const __m128i low_mask = _mm_set1_epi8(0x0F);
  const __m128i eight = _mm_set1_epi8(8);
  for (uint32_t b = 0; b < dim / kQuantBlock; ++b, src += kQ4Bytes, dst += kQuantBlock) {
    // Byte j holds value j in its low nibble and value j + 16 in its high nibble; values are q - 8.
    const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2));
    const __m128i lo = _mm_sub_epi8(_mm_and_si128(raw, low_mask), eight);
    const __m128i hi = _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(raw, 4), low_mask), eight);
    _mm_store_si128(reinterpret_cast<__m128i*>(codes), lo);
    _mm_store_si128(reinterpret_cast<__m128i*>(codes + 16), hi);
    decode_block_i8<I>(codes, half_at(src), dst);
  }
}

using DecodeFn = void (*)(const std::byte* src, uint32_t dim, float* dst);

template <class I>
DecodeFn decoder(GgmlType type) {
  switch (type) {
    case GgmlType::F16:
      return decode_halfs<I, false>;
    case GgmlType::BF16:
      return decode_halfs<I, true>;
    case GgmlType::Q8_0:
      return decode_q8_0<I>;
    case GgmlType::Q4_0:
      return decode_q4_0<I>;
    default:  // f32 is read in place; other types are rejected by check_attention_problem
      return nullptr;
  }
}

// Points rows[j] at the f32 row of cells[j] (j < n): into the cache for f32, else decoded into `buffer`.
template <class I>
void tile_rows(const KvHeadRows& kv, const uint32_t* cells, uint32_t n, std::vector<float>& buffer,
               const float** rows) {
  if (kv.type == GgmlType::F32) {
    for (uint32_t j = 0; j < n; ++j) rows[j] = reinterpret_cast<const float*>(kv.data + cells[j] * kv.stride);
    return;
  }
  if (buffer.size() < static_cast<size_t>(kTile) * kv.dim) buffer.resize(static_cast<size_t>(kTile) * kv.dim);
  const DecodeFn decode = decoder<I>(kv.type);
  for (uint32_t j = 0; j < n; ++j) {
    float* dst = buffer.data() + static_cast<size_t>(j) * kv.dim;
    if (decode) {
      decode(kv.data + cells[j] * kv.stride, kv.dim, dst);
    } else {
      std::fill_n(dst, kv.dim, 0.0f);
    }
    rows[j] = dst;
  }
}

// ---- vector arithmetic -------------------------------------------------------------------------------

template <class I>
float dot(const float* a, const float* b, uint32_t n) {
  typename I::V acc0 = I::zero(), acc1 = I::zero();
  uint32_t d = 0;
  for (; d + 2 * I::kWidth <= n; d += 2 * I::kWidth) {
    acc0 = I::fmadd(I::load(a + d), I::load(b + d), acc0);
    acc1 = I::fmadd(I::load(a + d + I::kWidth), I::load(b + d + I::kWidth), acc1);
  }
  for (; d + I::kWidth <= n; d += I::kWidth) acc0 = I::fmadd(I::load(a + d), I::load(b + d), acc0);
  float sum = I::hsum(I::add(acc0, acc1));
  for (; d < n; ++d) sum += a[d] * b[d];
  return sum;
}

// out[h * out_stride + i] = q_h . b[i] for H query heads (q_h = q + h * dim) and four rows b[0..3]: each
// key load serves H products and each query load four; the four sums of a head are reduced together.
template <class I, int H>
void dot_block(const float* q, uint32_t dim, const float* const* b, float* out, size_t out_stride) {
  typename I::V acc[H][4];
  for (int h = 0; h < H; ++h) {
    for (int i = 0; i < 4; ++i) acc[h][i] = I::zero();
  }
  uint32_t d = 0;
  for (; d + I::kWidth <= dim; d += I::kWidth) {
    const typename I::V k0 = I::load(b[0] + d), k1 = I::load(b[1] + d), k2 = I::load(b[2] + d), k3 = I::load(b[3] + d);
    for (int h = 0; h < H; ++h) {
      const typename I::V x = I::load(q + h * dim + d);
      acc[h][0] = I::fmadd(x, k0, acc[h][0]);
      acc[h][1] = I::fmadd(x, k1, acc[h][1]);
      acc[h][2] = I::fmadd(x, k2, acc[h][2]);
      acc[h][3] = I::fmadd(x, k3, acc[h][3]);
    }
  }
  for (int h = 0; h < H; ++h) {
    float* o = out + h * out_stride;
    I::hsum4(acc[h][0], acc[h][1], acc[h][2], acc[h][3], o);
    for (uint32_t t = d; t < dim; ++t) {
      for (int i = 0; i < 4; ++i) o[i] += q[h * dim + t] * b[i][t];
    }
  }
}

// s[h * s_stride + j] = soft_capped(scale * q_h . rows[j], softcap) for H heads (q_h = q + h * dim) and j < n;
// max[h] = the largest of head h's. The cap is scalar tanh: gemma2's heads see few enough keys that it costs little.
template <class I, int H>
void scores(const float* q, const float* const* rows, uint32_t n, uint32_t dim, float scale, float softcap, float* s,
            size_t s_stride, float* max) {
  uint32_t j = 0;
  for (; j + 4 <= n; j += 4) dot_block<I, H>(q, dim, rows + j, s + j, s_stride);
  for (; j < n; ++j) {
    for (int h = 0; h < H; ++h) s[h * s_stride + j] = dot<I>(q + h * dim, rows[j], dim);
  }
  for (int h = 0; h < H; ++h) {
    float* sh = s + h * s_stride;
    float m = -std::numeric_limits<float>::infinity();
    for (j = 0; j < n; ++j) {
      sh[j] = soft_capped(sh[j] * scale, softcap);
      m = std::max(m, sh[j]);
    }
    max[h] = m;
  }
}

// s[j] = exp(s[j] - max) for j < n; returns their sum.
template <class I>
float exp_shifted(float* s, uint32_t n, float max) {
  const typename I::V m = I::set1(max);
  typename I::V sum = I::zero();
  uint32_t j = 0;
  for (; j + I::kWidth <= n; j += I::kWidth) {
    const typename I::V e = I::exp(I::sub(I::load(s + j), m));
    I::store(s + j, e);
    sum = I::add(sum, e);
  }
  float total = I::hsum(sum);
  for (; j < n; ++j) total += s[j] = std::exp(s[j] - max);
  return total;
}

template <class I>
void scale_in_place(float* x, uint32_t n, float factor) {
  const typename I::V f = I::set1(factor);
  uint32_t d = 0;
  for (; d + I::kWidth <= n; d += I::kWidth) I::store(x + d, I::mul(I::load(x + d), f));
  for (; d < n; ++d) x[d] *= factor;
}

// For H heads: acc_h[offset .. offset + B * W) += sum_j w_h[j] * rows[j][same], with acc_h = acc +
// h * acc_stride and w_h = w + h * w_stride. H * B vectors of acc stay in registers across the rows and
// each value load serves H heads.
template <class I, int H, int B>
void weighted_block(float* acc, size_t acc_stride, const float* w, size_t w_stride, const float* const* rows,
                    uint32_t n, uint32_t offset) {
  typename I::V a[H][B];
  for (int h = 0; h < H; ++h) {
    for (int b = 0; b < B; ++b) a[h][b] = I::load(acc + h * acc_stride + offset + b * I::kWidth);
  }
  for (uint32_t j = 0; j < n; ++j) {
    typename I::V wj[H];
    for (int h = 0; h < H; ++h) wj[h] = I::set1(w[h * w_stride + j]);
    const float* row = rows[j] + offset;
    for (int b = 0; b < B; ++b) {
      const typename I::V v = I::load(row + b * I::kWidth);
      for (int h = 0; h < H; ++h) a[h][b] = I::fmadd(wj[h], v, a[h][b]);
    }
  }
  for (int h = 0; h < H; ++h) {
    for (int b = 0; b < B; ++b) I::store(acc + h * acc_stride + offset + b * I::kWidth, a[h][b]);
  }
}

// acc_h[dim] += sum_j w_h[j] * rows[j] for H heads (strides as in weighted_block), j < n.
template <class I, int H>
void weighted_sum(float* acc, size_t acc_stride, const float* w, size_t w_stride, const float* const* rows, uint32_t n,
                  uint32_t dim) {
  constexpr uint32_t W = I::kWidth;
  constexpr int kWide = I::kAccumulators / H;  // vectors per head that fit the accumulator registers
  uint32_t d = 0;
  if constexpr (kWide >= 8) {
    for (; d + 8 * W <= dim; d += 8 * W) weighted_block<I, H, 8>(acc, acc_stride, w, w_stride, rows, n, d);
  }
  for (; d + 4 * W <= dim; d += 4 * W) weighted_block<I, H, 4>(acc, acc_stride, w, w_stride, rows, n, d);
  for (; d + W <= dim; d += W) weighted_block<I, H, 1>(acc, acc_stride, w, w_stride, rows, n, d);
  for (; d < dim; ++d) {
    for (int h = 0; h < H; ++h) {
      float a = acc[h * acc_stride + d];
      for (uint32_t j = 0; j < n; ++j) a += w[h * w_stride + j] * rows[j][d];
      acc[h * acc_stride + d] = a;
    }
  }
}

// Calls fn.template operator()<H>(h0) for consecutive groups of heads covering [0, n_heads): groups of
// the largest size the ISA's registers allow (I::kMaxHeads: 4 or 2), then 2, then 1.
template <class I, class Fn>
void for_head_groups(uint32_t n_heads, Fn&& fn) {
  uint32_t h = 0;
  if constexpr (I::kMaxHeads >= 4) {
    for (; h + 4 <= n_heads; h += 4) fn.template operator()<4>(h);
  }
  for (; h + 2 <= n_heads; h += 2) fn.template operator()<2>(h);
  for (; h < n_heads; ++h) fn.template operator()<1>(h);
}

// ---- the two algorithms ------------------------------------------------------------------------------

inline const float* query(const AttentionProblem& p, size_t r, uint32_t h) {
  return p.q + p.rows[r] * p.q_stride + static_cast<size_t>(h) * p.k.dim;
}
inline float* output(const AttentionProblem& p, size_t r, uint32_t h) {
  return p.out + p.rows[r] * p.out_stride + static_cast<size_t>(h) * p.v.dim;
}

// Keys per flash tile: the f32 key and value rows of a tile (both live at once) within half of a 32 KiB L1.
inline uint32_t flash_tile(uint32_t dim_k, uint32_t dim_v) {
  constexpr uint32_t kBudget = 16 * 1024 / sizeof(float);
  const uint32_t keys = kBudget / std::max<uint32_t>(1, dim_k + dim_v);
  return std::clamp<uint32_t>(keys / 4 * 4, 8, kTile);
}

// Query iq's partial state (split-K: see AttentionProblem::partial).
inline void store_partial(const AttentionProblem& p, size_t iq, float m, float l, const float* acc) {
  p.partial->max[iq] = m;
  p.partial->sum[iq] = l;
  std::copy_n(acc, p.v.dim, p.partial->acc + iq * p.v.dim);
}

// One pass over key tiles with an online softmax: per query a running max m, sum l and accumulator acc.
template <class I>
void flash(const AttentionProblem& p, AttentionScratch& scratch) {
  if (p.rows.empty()) return;
  const uint32_t k_end = range_key_end(p);
  const size_t n_queries = p.rows.size() * p.n_heads;
  scratch.acc.assign(n_queries * p.v.dim, 0.0f);
  scratch.stats.resize(2 * n_queries);
  float* m = scratch.stats.data();
  float* l = m + n_queries;
  std::fill_n(m, n_queries, -std::numeric_limits<float>::infinity());
  std::fill_n(l, n_queries, 0.0f);
  if (scratch.scores.size() < 4 * kTile) scratch.scores.resize(4 * kTile);  // [group heads][kTile]
  float* s = scratch.scores.data();
  const float* key_rows[kTile];
  const float* value_rows[kTile];
  const uint32_t step = flash_tile(p.k.dim, p.v.dim);
  for (uint32_t k0 = p.key_begin; k0 < k_end; k0 += step) {
    const uint32_t tile = std::min(step, k_end - k0);
    tile_rows<I>(p.k, p.cells.data() + k0, tile, scratch.key_tile, key_rows);
    tile_rows<I>(p.v, p.cells.data() + k0, tile, scratch.value_tile, value_rows);
    for (size_t r = 0; r < p.rows.size(); ++r) {
      const uint32_t row_end = row_key_end(p, r);
      if (row_end <= k0) continue;
      const uint32_t n = std::min(tile, row_end - k0);
      for_head_groups<I>(p.n_heads, [&]<int H>(uint32_t h0) {
        const size_t q0 = r * p.n_heads + h0;  // the group's first query
        float tile_max[H];
        scores<I, H>(query(p, r, h0), key_rows, n, p.k.dim, p.scale, p.softcap, s, kTile, tile_max);
        for (int h = 0; h < H; ++h) {
          const size_t iq = q0 + h;
          if (tile_max[h] > m[iq]) {  // rescale what was summed so far to the new maximum
            const float correction = std::exp(m[iq] - tile_max[h]);
            l[iq] *= correction;
            scale_in_place<I>(scratch.acc.data() + iq * p.v.dim, p.v.dim, correction);
            m[iq] = tile_max[h];
          }
          l[iq] += exp_shifted<I>(s + h * kTile, n, m[iq]);
        }
        weighted_sum<I, H>(scratch.acc.data() + q0 * p.v.dim, p.v.dim, s, kTile, value_rows, n, p.v.dim);
      });
    }
  }
  for (size_t r = 0; r < p.rows.size(); ++r) {
    for (uint32_t h = 0; h < p.n_heads; ++h) {
      const size_t iq = r * p.n_heads + h;
      if (p.partial) {
        store_partial(p, iq, m[iq], l[iq], scratch.acc.data() + iq * p.v.dim);
        continue;
      }
      float* out = output(p, r, h);
      std::copy_n(scratch.acc.data() + iq * p.v.dim, p.v.dim, out);
      scale_in_place<I>(out, p.v.dim, 1.0f / (l[iq] + sink_weight(p, h, m[iq])));
    }
  }
}

// All scores of every query (one pass over the keys), an exact softmax per query, then a pass over the
// values. With a partial output the weights stay exp(score - max), unnormalized.
template <class I>
void standard(const AttentionProblem& p, AttentionScratch& scratch) {
  if (p.rows.empty()) return;
  const uint32_t k_begin = p.key_begin;
  const uint32_t k_end = std::max(range_key_end(p), k_begin);
  const uint32_t span = std::max<uint32_t>(k_end - k_begin, 1);  // scores per query
  const size_t n_queries = p.rows.size() * p.n_heads;
  scratch.scores.resize(n_queries * span);
  scratch.acc.assign(n_queries * p.v.dim, 0.0f);
  scratch.stats.resize(2 * n_queries);
  float* m = scratch.stats.data();
  float* l = m + n_queries;
  const float* rows[kTile];
  for (uint32_t k0 = k_begin; k0 < k_end; k0 += kTile) {
    const uint32_t tile = std::min(kTile, k_end - k0);
    tile_rows<I>(p.k, p.cells.data() + k0, tile, scratch.key_tile, rows);
    for (size_t r = 0; r < p.rows.size(); ++r) {
      const uint32_t row_end = row_key_end(p, r);
      if (row_end <= k0) continue;
      const uint32_t n = std::min(tile, row_end - k0);
      for_head_groups<I>(p.n_heads, [&]<int H>(uint32_t h0) {
        float* s = scratch.scores.data() + (r * p.n_heads + h0) * span + (k0 - k_begin);
        float unused[H];
        scores<I, H>(query(p, r, h0), rows, n, p.k.dim, p.scale, p.softcap, s, span, unused);
      });
    }
  }
  for (size_t r = 0; r < p.rows.size(); ++r) {
    const uint32_t n = std::max(row_key_end(p, r), k_begin) - k_begin;
    for (uint32_t h = 0; h < p.n_heads; ++h) {
      const size_t iq = r * p.n_heads + h;
      float* s = scratch.scores.data() + iq * span;
      float max = -std::numeric_limits<float>::infinity();
      for (uint32_t j = 0; j < n; ++j) max = std::max(max, s[j]);
      m[iq] = max;
      l[iq] = n > 0 ? exp_shifted<I>(s, n, max) : 0.0f;
      if (!p.partial) scale_in_place<I>(s, n, 1.0f / (l[iq] + sink_weight(p, h, max)));
    }
  }
  for (uint32_t k0 = k_begin; k0 < k_end; k0 += kTile) {
    const uint32_t tile = std::min(kTile, k_end - k0);
    tile_rows<I>(p.v, p.cells.data() + k0, tile, scratch.value_tile, rows);
    for (size_t r = 0; r < p.rows.size(); ++r) {
      const uint32_t row_end = row_key_end(p, r);
      if (row_end <= k0) continue;
      const uint32_t n = std::min(tile, row_end - k0);
      for_head_groups<I>(p.n_heads, [&]<int H>(uint32_t h0) {
        const size_t q0 = r * p.n_heads + h0;
        weighted_sum<I, H>(scratch.acc.data() + q0 * p.v.dim, p.v.dim,
                           scratch.scores.data() + q0 * span + (k0 - k_begin), span, rows, n, p.v.dim);
      });
    }
  }
  for (size_t r = 0; r < p.rows.size(); ++r) {
    for (uint32_t h = 0; h < p.n_heads; ++h) {
      const size_t iq = r * p.n_heads + h;
      if (p.partial) {
        store_partial(p, iq, m[iq], l[iq], scratch.acc.data() + iq * p.v.dim);
      } else {
        std::copy_n(scratch.acc.data() + iq * p.v.dim, p.v.dim, output(p, r, h));
      }
    }
  }
}

}  // namespace
}  // namespace infertune::attention_simd
