#pragma once
// Scale searches shared by the K-quant encoders (kernels/quant/q*_K.cpp). Each one reproduces the float
// arithmetic of ggml's reference routine operation for operation (same products, same summation order,
// same comparisons), because that is what makes our encodings byte-identical to ggml's. Anything that
// reorders a sum here changes bytes: re-run the fixture byte-equality tests after every edit.
#include <algorithm>
#include <bit>
#include <cstdint>

#include "kernels/half.h"

namespace infertune::kquant {

// ggml's GROUP_MAX_EPS: a group whose largest magnitude is below this is encoded as all zero.
inline constexpr float kGroupMaxEps = 1e-15f;

// Round to nearest, ties to even, exactly as ggml's nearest_int for |v| <= 2^22 - 1: adding 1.5 * 2^23
// leaves round(v) + 2^22 in the low 23 mantissa bits. Outside that range ggml's trick is meaningless (it
// asserts in debug builds); here v saturates first, and NaN comes out as 0 or another in-range value, so
// garbage input can never produce an out-of-range code.
inline int nearest_int(float v) {
  constexpr float kLimit = 4194303.f;
  v = std::min(std::max(v, -kLimit), kLimit);  // NaN passes through both unchanged
  const float shifted = v + 12582912.f;
  return static_cast<int>(std::bit_cast<uint32_t>(shifted) & 0x007fffffu) - 0x00400000;
}

// f32 -> f16 for a stored block scale. Same as f32_to_f16 wherever the value fits; beyond the half range
// it saturates to +-65504 instead of becoming inf (where ggml would store inf), so huge inputs decode to
// large finite values, never inf or NaN.
inline f16_t to_half_scale(float v) {
  constexpr float kHalfMax = 65504.f;
  return f32_to_f16(std::min(std::max(v, -kHalfMax), kHalfMax));
}

// Parameters of the grid search over inverse scales in fit_scale_min_groups: tries
// iscale = (rmin + rdelta * step + nmax) / (max - min) for step = 0..nstep.
struct ScaleMinSearch {
  float rmin;
  float rdelta;
  int nstep;
  bool use_mad;  // minimise the weighted absolute error instead of the weighted squared error
};

// The search of ggml's make_qkx3_quants, which the importance-weighted encoders use (Q4_1, Q5_1, Q2_K,
// Q4_K, Q5_K): 37 candidate scales from nmax - 0.9 to nmax + 0.9, squared error. Given explicit weights,
// make_qkx3_quants computes exactly what make_qkx2_quants does, so fit_scale_min_groups serves both.
inline constexpr ScaleMinSearch kWeightedScaleMinSearch{-0.9f, 0.05f, 36, false};

// ggml's make_qkx2_quants, for `groups` independent groups of n values at once (they run side by side in
// SIMD lanes; each group gets exactly ggml's sequential result). Fits x[i] ~ scale * L[i] - min with L[i]
// in [0, nmax] and min >= 0 (the offset only ever lowers values), by weighted least squares over the
// candidate scales. n <= 32.
//   x, weights, L: [groups][n]   scales, mins: [groups]
void fit_scale_min_groups(int groups, int n, int nmax, const float* x, const float* weights, uint8_t* L, float* scales,
                          float* mins, const ScaleMinSearch& search);

// ggml's make_qx_quants with rmse_type 1, for `groups` independent groups of n values at once (side by side
// in SIMD lanes, each with exactly ggml's result): a symmetric fit x[i] ~ scale * l with l in
// [-nmax, nmax - 1], weighted by `weights` (an importance matrix's) or, when null, by x[i]^2, trying 18
// scales around nmax / max|x|. Writes L[i] = l + nmax and the scales (0 for an all-zero group). n <= 32.
//   x, weights, L: [groups][n]   scales: [groups]
void fit_symmetric_scale_groups(int groups, int n, int nmax, const float* x, const float* weights, int8_t* L,
                                float* scales);

// ggml's make_q3_quants with do_rmse: starts like fit_symmetric_scale_groups from iscale = -nmax / max, then up to
// five passes that move single codes while the x^2-weighted fit improves. Writes L[i] = l + nmax and
// returns scale. n <= 32.
//   x: [n]   L: [n]
float fit_q3_scale(int n, int nmax, const float* x, int8_t* L);

// The 12-byte packing of eight 6-bit (scale, min) pairs used by q4_K and q5_K: pairs 0-3 sit in the low
// 6 bits of bytes 0-3 / 4-7; pairs 4-7 keep their low nibbles in bytes 8-11 and their top 2 bits in the
// top 2 bits of bytes 0-3 (scales) / 4-7 (mins).
//   scales, mins: [8] each < 64   packed: [12]
void pack_scales_mins_6bit(const uint8_t* scales, const uint8_t* mins, uint8_t* packed);

inline void unpack_scale_min_6bit(int j, const uint8_t* packed, uint8_t* scale, uint8_t* min) {
  if (j < 4) {
    *scale = packed[j] & 63;
    *min = packed[j + 4] & 63;
  } else {
    *scale = static_cast<uint8_t>((packed[j + 4] & 0xF) | ((packed[j - 4] >> 6) << 4));
    *min = static_cast<uint8_t>((packed[j + 4] >> 4) | ((packed[j] >> 6) << 4));
  }
}

// The float scale and min of the two 32-value sub-blocks of 64-value chunk `chunk` of a q4_K / q5_K
// super-block, as ggml's decoder computes them (d * scale, dmin * min).
struct ChunkScaleMin {
  float d1, m1, d2, m2;
};
inline ChunkScaleMin chunk_scale_min(float d, float dmin, const uint8_t* packed, int chunk) {
  uint8_t sc, m;
  ChunkScaleMin out;
  unpack_scale_min_6bit(2 * chunk, packed, &sc, &m);
  out.d1 = d * sc;
  out.m1 = dmin * m;
  unpack_scale_min_6bit(2 * chunk + 1, packed, &sc, &m);
  out.d2 = d * sc;
  out.m2 = dmin * m;
  return out;
}

// The part of the q4_K / q5_K encoders that the two share (ggml's quantize_row_q{4,5}_K_ref without the
// bit packing): per 32-value sub-block fit_scale_min_groups with weights sqrt(mean x^2) + |x|, then 6-bit
// quantization of the 8 scales and mins against the super-block's d and dmin, then the final codes
// L[i] in [0, nmax] recomputed from the stored (rounded) scales.
//   x: [256]   scales: [12]   L: [256]
struct ScaleMinCodes {
  f16_t d;
  f16_t dmin;
  uint8_t scales[12];
  uint8_t L[256];
};
void encode_scale_min_superblock(const float* x, int nmax, const ScaleMinSearch& search, ScaleMinCodes* out);

// The same with an importance matrix (ggml's quantize_row_q{4,5}_K_impl): weights importance[i] *
// sqrt(sigma2 + x[i]^2) with sigma2 = twice the super-block's mean square, the make_qkx3_quants search, and
// the 8 scales and mins quantized to 6 bits by weighted fits of their own (weighted::fit_positive_scale,
// each sub-block weighted by its summed weights) instead of from their maxima.
//   x, importance: [256]
void encode_scale_min_superblock_weighted(const float* x, const float* importance, int nmax, ScaleMinCodes* out);

// The final step of both: L[i] in [0, nmax] recomputed from the stored (rounded) d, dmin and 6-bit scales.
// A sub-block whose scale rounded to 0 keeps the codes of its fit (they decode to -min either way).
//   x: [256]
void requantize_scale_min_codes(const float* x, int nmax, ScaleMinCodes* out);

}  // namespace infertune::kquant
