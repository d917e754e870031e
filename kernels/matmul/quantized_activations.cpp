#include "kernels/matmul/quantized_activations.h"

#include <cstring>
#include <new>

namespace infertune {
namespace {

// Token t's float of item `item` in a panel array [n_panels][n_items][16].
template <class T>
T* panel_lane(std::vector<T>& panels, size_t n_items, size_t t, size_t item) {
  return panels.data() + ((t / kPanelTokens) * n_items + item) * kPanelTokens + t % kPanelTokens;
}

// Token t's 4 codes of group 0 in the panel codes [n_panels][n_cols / 4][16][4]; group g is g * 64 further.
int8_t* lane_codes(std::vector<int8_t>& panels, size_t n_cols, size_t t) {
  return panels.data() + ((t / kPanelTokens) * (n_cols / 4) * kPanelTokens + t % kPanelTokens) * 4;
}

// Token t's codes (value order, [n_cols]; null: zeros) into its lane of the panel codes.
void scatter_codes(const int8_t* codes, size_t n_cols, size_t t, std::vector<int8_t>& panels) {
  int8_t* dst = lane_codes(panels, n_cols, t);
  for (size_t g = 0; g < n_cols / 4; ++g) {
    if (codes) {
      std::memcpy(dst + g * kPanelTokens * 4, codes + 4 * g, 4);
    } else {
      std::memset(dst + g * kPanelTokens * 4, 0, 4);
    }
  }
}

// Two int16 in one int32, a low: the operand layout of VPMADDWD.
int32_t int16_pair(int a, int b) {
  return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint16_t>(a)) |
                              (static_cast<uint32_t>(static_cast<uint16_t>(b)) << 16));
}

}  // namespace

QuantizedActivations::QuantizedActivations() = default;
QuantizedActivations::~QuantizedActivations() = default;
QuantizedActivations::QuantizedActivations(QuantizedActivations&&) noexcept = default;
QuantizedActivations& QuantizedActivations::operator=(QuantizedActivations&&) noexcept = default;

Status QuantizedActivations::prepare(const float* x, size_t n_tokens, size_t n_cols,
                                     std::span<const GgmlType> weight_types) {
  q8_ = q8k_ = false;
  for (GgmlType type : weight_types) {
    const ActivationFormat f = activation_format(type);
    q8_ = q8_ || f == ActivationFormat::q8;
    q8k_ = q8k_ || f == ActivationFormat::q8k;
  }
  if ((q8_ && n_cols % 32 != 0) || (q8k_ && n_cols % kquant::kSuperBlock != 0)) {
    return fail("activations: rows of {} values are not whole {}-value blocks", n_cols, q8k_ ? 256 : 32);
  }
  x_ = x;
  n_tokens_ = n_tokens;
  n_cols_ = n_cols;
  const size_t padded = has_panels() ? n_panels() * kPanelTokens : 0;
  try {
    if (q8_) {
      q8_codes_.resize(n_tokens * n_cols);
      q8_scales_.resize(n_tokens * n_cols / 32);
      q8_sums_.resize(n_tokens * n_cols / 32);
      q8_isums_.resize(n_tokens * n_cols / 32);
      q8_panel_codes_.resize(padded * n_cols);
      q8_panel_scales_.resize(padded * n_cols / 32);
      q8_panel_sums_.resize(padded * n_cols / 32);
      q8_panel_isums_.resize(padded * n_cols / 32);
    }
    if (q8k_) {
      q8k_blocks_.resize(n_tokens * n_cols / kquant::kSuperBlock);
      q8k_panel_codes_.resize(padded * n_cols);
      q8k_panel_scales_.resize(padded * n_cols / kquant::kSuperBlock);
      q8k_panel_pairs16_.resize(padded * n_cols / 32);
      q8k_panel_pairs32_.resize(padded * n_cols / 64);
    }
  } catch (const std::bad_alloc&) {
    q8_ = q8k_ = false;
    return fail("activations: cannot allocate quantized buffers for {} tokens x {} values", n_tokens, n_cols);
  }
  return {};
}

void QuantizedActivations::quantize_token_q8(size_t t, int8_t* natural) {
  const size_t nb = n_cols_ / 32;
  float* d = q8_scales_.data() + t * nb;
  float* dsum = q8_sums_.data() + t * nb;
  int32_t* isum = q8_isums_.data() + t * nb;
  quantize_row_q8(x_ + t * n_cols_, n_cols_, natural, d, dsum, isum);
  pair_interleave_q8(natural, n_cols_, q8_codes_.data() + t * n_cols_);
  if (!has_panels()) return;
  scatter_codes(natural, n_cols_, t, q8_panel_codes_);
  for (size_t b = 0; b < nb; ++b) {
    *panel_lane(q8_panel_scales_, nb, t, b) = d[b];
    *panel_lane(q8_panel_sums_, nb, t, b) = dsum[b];
    *panel_lane(q8_panel_isums_, nb, t, b) = isum[b];
  }
}

void QuantizedActivations::quantize_token_q8k(size_t t) {
  const size_t nsb = n_cols_ / kquant::kSuperBlock;
  kquant::BlockQ8K* blocks = q8k_blocks_.data() + t * nsb;
  quantize_row_q8k(x_ + t * n_cols_, n_cols_, blocks);
  if (!has_panels()) return;
  // The blocks' codes are in value order but separated by their scales and sums: copied block by block.
  int8_t* dst = lane_codes(q8k_panel_codes_, n_cols_, t);
  for (size_t b = 0; b < nsb; ++b) {
    const kquant::BlockQ8K& blk = blocks[b];
    for (size_t g = 0; g < kquant::kSuperBlock / 4; ++g) {
      std::memcpy(dst + (b * kquant::kSuperBlock / 4 + g) * kPanelTokens * 4, blk.qs + 4 * g, 4);
    }
    *panel_lane(q8k_panel_scales_, nsb, t, b) = blk.d;
    int32_t sums32[8];
    for (size_t g = 0; g < 8; ++g) {
      *panel_lane(q8k_panel_pairs16_, n_cols_ / 32, t, 8 * b + g) = int16_pair(blk.bsums[2 * g], blk.bsums[2 * g + 1]);
      sums32[g] = blk.bsums[2 * g] + blk.bsums[2 * g + 1];
    }
    for (size_t g = 0; g < 4; ++g) {
      *panel_lane(q8k_panel_pairs32_, n_cols_ / 64, t, 4 * b + g) = int16_pair(sums32[2 * g], sums32[2 * g + 1]);
    }
  }
}

// Zeroes the lanes of tokens [first_pad, n_panels * 16) in the last panel.
void QuantizedActivations::clear_padding(size_t first_pad) {
  const size_t end = n_panels() * kPanelTokens;
  for (size_t t = first_pad; t < end; ++t) {
    if (q8_) {
      const size_t nb = n_cols_ / 32;
      scatter_codes(nullptr, n_cols_, t, q8_panel_codes_);
      for (size_t b = 0; b < nb; ++b) {
        *panel_lane(q8_panel_scales_, nb, t, b) = *panel_lane(q8_panel_sums_, nb, t, b) = 0;
        *panel_lane(q8_panel_isums_, nb, t, b) = 0;
      }
    }
    if (q8k_) {
      scatter_codes(nullptr, n_cols_, t, q8k_panel_codes_);
      for (size_t b = 0; b < n_cols_ / 256; ++b) *panel_lane(q8k_panel_scales_, n_cols_ / 256, t, b) = 0;
      for (size_t g = 0; g < n_cols_ / 32; ++g) *panel_lane(q8k_panel_pairs16_, n_cols_ / 32, t, g) = 0;
      for (size_t g = 0; g < n_cols_ / 64; ++g) *panel_lane(q8k_panel_pairs32_, n_cols_ / 64, t, g) = 0;
    }
  }
}

void QuantizedActivations::quantize(size_t begin, size_t end) {
  if (q8_) {
    thread_local std::vector<int8_t> natural;
    natural.resize(n_cols_);
    for (size_t t = begin; t < end; ++t) quantize_token_q8(t, natural.data());
  }
  if (q8k_) {
    for (size_t t = begin; t < end; ++t) quantize_token_q8k(t);
  }
  if (has_panels() && end == n_tokens_ && begin < end) clear_padding(n_tokens_);
}

Status QuantizedActivations::quantize_all(const float* x, size_t n_tokens, size_t n_cols,
                                          std::span<const GgmlType> weight_types) {
  if (Status s = prepare(x, n_tokens, n_cols, weight_types); !s) return s;
  quantize(0, n_tokens);
  return {};
}

ActivationPanel QuantizedActivations::q8_panel(size_t p) const {
  const size_t nb = n_cols_ / 32;
  ActivationPanel panel;
  panel.codes = q8_panel_codes_.data() + p * kPanelTokens * n_cols_;
  panel.scales = q8_panel_scales_.data() + p * kPanelTokens * nb;
  panel.sums = q8_panel_sums_.data() + p * kPanelTokens * nb;
  panel.isums = q8_panel_isums_.data() + p * kPanelTokens * nb;
  return panel;
}

ActivationPanel QuantizedActivations::q8k_panel(size_t p) const {
  ActivationPanel panel;
  panel.codes = q8k_panel_codes_.data() + p * kPanelTokens * n_cols_;
  panel.scales = q8k_panel_scales_.data() + p * kPanelTokens * (n_cols_ / 256);
  panel.pairs16 = q8k_panel_pairs16_.data() + p * kPanelTokens * (n_cols_ / 32);
  panel.pairs32 = q8k_panel_pairs32_.data() + p * kPanelTokens * (n_cols_ / 64);
  return panel;
}

}  // namespace infertune
