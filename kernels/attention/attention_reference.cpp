#include "kernels/attention/attention_reference.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/quant.h"

namespace infertune {

void decode_kv_row(const KvHeadRows& rows, uint32_t cell, float* dst) {
  const size_t bytes = *ggml_row_bytes(rows.type, rows.dim);  // checked by check_attention_problem
  const std::span<const std::byte> src(rows.data + static_cast<size_t>(cell) * rows.stride, bytes);
  (void)dequantize_row(rows.type, src, std::span<float>(dst, rows.dim));
}

namespace {

const float* query(const AttentionProblem& p, size_t r, uint32_t h) {
  return p.q + p.rows[r] * p.q_stride + static_cast<size_t>(h) * p.k.dim;
}
float* output(const AttentionProblem& p, size_t r, uint32_t h) {
  return p.out + p.rows[r] * p.out_stride + static_cast<size_t>(h) * p.v.dim;
}

// Decodes cells[0 .. n) of `rows` into [n][dim].
void decode_rows(const KvHeadRows& rows, std::span<const uint32_t> cells, std::vector<float>& out) {
  out.resize(cells.size() * rows.dim);
  for (size_t j = 0; j < cells.size(); ++j) decode_kv_row(rows, cells[j], out.data() + j * rows.dim);
}

}  // namespace

void finish_query(const AttentionProblem& p, size_t iq, float m, float l, const float* acc, float* out) {
  const size_t dim = p.v.dim;
  if (p.partial) {
    p.partial->max[iq] = m;
    p.partial->sum[iq] = l;
    std::copy_n(acc, dim, p.partial->acc + iq * dim);
    return;
  }
  const float inverse = 1.0f / (l + sink_weight(p, static_cast<uint32_t>(iq % p.n_heads), m));
  for (size_t d = 0; d < dim; ++d) out[d] = acc[d] * inverse;
}

void reference_attention(const AttentionProblem& p, AttentionScratch& scratch) {
  if (p.rows.empty()) return;
  const uint32_t k0 = p.key_begin;
  const uint32_t k1 = std::max(range_key_end(p), k0);
  const auto range = k1 > k0 ? p.cells.subspan(k0, k1 - k0) : std::span<const uint32_t>();
  decode_rows(p.k, range, scratch.key_tile);
  decode_rows(p.v, range, scratch.value_tile);
  std::vector<double> scores(k1 - k0);
  std::vector<double> acc(p.v.dim);
  std::vector<float> acc_f(p.v.dim);
  for (size_t r = 0; r < p.rows.size(); ++r) {
    const uint32_t n = std::max(row_key_end(p, r), k0) - k0;  // keys of this row in the range
    for (uint32_t h = 0; h < p.n_heads; ++h) {
      const float* q = query(p, r, h);
      double max = -std::numeric_limits<double>::infinity();
      for (uint32_t j = 0; j < n; ++j) {
        const float* key = scratch.key_tile.data() + static_cast<size_t>(j) * p.k.dim;
        double dot = 0;
        for (uint32_t d = 0; d < p.k.dim; ++d) dot += static_cast<double>(q[d]) * key[d];
        scores[j] = dot * p.scale;
        if (p.softcap != 0.0f) scores[j] = p.softcap * std::tanh(scores[j] / p.softcap);
        max = std::max(max, scores[j]);
      }
      double sum = 0;
      for (uint32_t j = 0; j < n; ++j) sum += scores[j] = std::exp(scores[j] - max);
      std::fill(acc.begin(), acc.end(), 0.0);
      for (uint32_t j = 0; j < n; ++j) {
        const float* value = scratch.value_tile.data() + static_cast<size_t>(j) * p.v.dim;
        for (uint32_t d = 0; d < p.v.dim; ++d) acc[d] += scores[j] * value[d];
      }
      float* out = output(p, r, h);
      if (!p.partial) {  // normalized in double
        if (p.sinks) sum += std::exp(static_cast<double>(p.sinks[h]) - max);
        for (uint32_t d = 0; d < p.v.dim; ++d) out[d] = static_cast<float>(acc[d] / sum);
        continue;
      }
      for (uint32_t d = 0; d < p.v.dim; ++d) acc_f[d] = static_cast<float>(acc[d]);
      finish_query(p, r * p.n_heads + h, static_cast<float>(max), static_cast<float>(sum), acc_f.data(), out);
    }
  }
}

void scalar_flash_attention(const AttentionProblem& p, AttentionScratch& scratch) {
  if (p.rows.empty()) return;
  const uint32_t k_end = range_key_end(p);
  const size_t n_queries = p.rows.size() * p.n_heads;
  // Per query: the running max m, the running sum l of exp(score - m), and acc = sum exp(score - m) v.
  scratch.acc.assign(n_queries * p.v.dim, 0.0f);
  scratch.stats.assign(2 * n_queries, 0.0f);
  float* m = scratch.stats.data();
  float* l = m + n_queries;
  std::fill_n(m, n_queries, -std::numeric_limits<float>::infinity());
  scratch.scores.resize(kAttentionKeyTile);
  for (uint32_t k0 = p.key_begin; k0 < k_end; k0 += kAttentionKeyTile) {
    const uint32_t tile = std::min(kAttentionKeyTile, k_end - k0);
    decode_rows(p.k, p.cells.subspan(k0, tile), scratch.key_tile);
    decode_rows(p.v, p.cells.subspan(k0, tile), scratch.value_tile);
    for (size_t r = 0; r < p.rows.size(); ++r) {
      const uint32_t row_end = row_key_end(p, r);
      if (row_end <= k0) continue;
      const uint32_t n = std::min(tile, row_end - k0);
      for (uint32_t h = 0; h < p.n_heads; ++h) {
        const size_t iq = r * p.n_heads + h;
        const float* q = query(p, r, h);
        float* s = scratch.scores.data();
        float tile_max = -std::numeric_limits<float>::infinity();
        for (uint32_t j = 0; j < n; ++j) {
          const float* key = scratch.key_tile.data() + static_cast<size_t>(j) * p.k.dim;
          float dot = 0;
          for (uint32_t d = 0; d < p.k.dim; ++d) dot += q[d] * key[d];
          s[j] = soft_capped(dot * p.scale, p.softcap);
          tile_max = std::max(tile_max, s[j]);
        }
        float* acc = scratch.acc.data() + iq * p.v.dim;
        // A larger maximum rescales what was summed so far to the new reference.
        if (tile_max > m[iq]) {
          const float correction = std::exp(m[iq] - tile_max);
          l[iq] *= correction;
          for (uint32_t d = 0; d < p.v.dim; ++d) acc[d] *= correction;
          m[iq] = tile_max;
        }
        for (uint32_t j = 0; j < n; ++j) {
          const float weight = std::exp(s[j] - m[iq]);
          l[iq] += weight;
          const float* value = scratch.value_tile.data() + static_cast<size_t>(j) * p.v.dim;
          for (uint32_t d = 0; d < p.v.dim; ++d) acc[d] += weight * value[d];
        }
      }
    }
  }
  for (size_t r = 0; r < p.rows.size(); ++r) {
    for (uint32_t h = 0; h < p.n_heads; ++h) {
      const size_t iq = r * p.n_heads + h;
      finish_query(p, iq, m[iq], l[iq], scratch.acc.data() + iq * p.v.dim, output(p, r, h));
    }
  }
}

}  // namespace infertune
