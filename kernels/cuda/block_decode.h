#pragma once
// Block decoders shared by the host and the CUDA device: the values of one "piece" of a GGUF tensor row.
//
// A piece is 32 consecutive values of a row. Every format decoded here packs a multiple of 32 values per
// block (plain float types: 32 elements; K-quants and IQ4_XS: 256-value super-blocks = 8 pieces; the
// 32-value formats: one block per piece), and within a super-block every group of 32 values depends only on
// the super-block's header and its own bytes. So a piece is the natural unit of GPU work: one thread
// decodes one piece into registers, and the matrix-vector and dequantize-to-f16 kernels build on it without
// knowing any block layout.
//
// The results are bit-identical to the reference dequantize_row (kernels/quant.h, kernels/quant/*.cpp):
// the same conversions to float and the same order of float operations. Every product that a sum follows
// is exact (an f16 times small integers: at most 22 significant bits), so a fused multiply-add could not
// change the bits either; the device path still spells out round-to-nearest multiplies and adds so that no
// contraction question arises. The header compiles as C++17 (nvcc) and C++20 (g++); it includes no
// project header because kernels/half.h needs C++20.
//
// Blocks in a row are not aligned, so every field is read byte by byte (little-endian, as GGUF stores it).
#include <cstdint>
#include <cstring>

#ifndef INFERTUNE_HD
#if defined(__CUDACC__)
#define INFERTUNE_HD __host__ __device__ __forceinline__
#else
#define INFERTUNE_HD inline
#endif
#endif

namespace infertune::cuda {

// ggml's numeric type ids (the same numbers as infertune::GgmlType in kernels/ggml_type.h).
enum class BlockType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  IQ4_NL = 20,
  IQ4_XS = 23,
  BF16 = 30,
  MXFP4 = 39,
};

inline constexpr int kPieceValues = 32;

namespace block_decode_detail {

// ---- Bits, halves and float arithmetic that mean the same on host and device ----

INFERTUNE_HD float float_from_bits(uint32_t bits) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(bits);
#else
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
#endif
}

INFERTUNE_HD float mul(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

INFERTUNE_HD float add(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

INFERTUNE_HD float sub(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}

INFERTUNE_HD uint32_t load_u16(const uint8_t* p) { return p[0] | (uint32_t{p[1]} << 8); }
INFERTUNE_HD uint32_t load_u32(const uint8_t* p) { return load_u16(p) | (load_u16(p + 2) << 16); }

// As kernels/half.h's f16_to_f32: exact, NaN payload kept and quieted. A subnormal half is
// mantissa * 2^-24, which a float holds exactly, so no normalization loop is needed.
INFERTUNE_HD float f16_bits_to_f32(uint32_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1f) {
    const uint32_t quiet = mantissa != 0 ? 0x00400000u : 0u;
    return float_from_bits(sign | 0x7f800000u | (mantissa << 13) | quiet);
  }
  if (exponent == 0) {
    const float magnitude = mul(static_cast<float>(mantissa), 5.9604644775390625e-8f);  // exact: 2^-24
    return sign != 0 ? -magnitude : magnitude;  // negation is exact; gives -0.0f for the negative zero
  }
  return float_from_bits(sign | ((exponent + 127 - 15) << 23) | (mantissa << 13));
}

INFERTUNE_HD float load_f16(const uint8_t* p) { return f16_bits_to_f32(load_u16(p)); }

// The non-linear codebook of IQ4_NL and IQ4_XS (ggml's kvalues_iq4nl: -127, -104, -83, -65, -49, -35, -22,
// -10, 1, 13, 25, 38, 53, 69, 89, 113) as int8 bytes of two 64-bit constants: the device then needs no
// __constant__ copy of a table, and the lookup stays in registers.
INFERTUNE_HD int iq4_value(int code) {
  const uint64_t packed = (code & 8) != 0 ? 0x7159453526190d01ull : 0xf6eaddcfbfad9881ull;
  return static_cast<int8_t>(static_cast<uint8_t>(packed >> (8 * (code & 7))));
}

// MXFP4's doubled FP4 codebook (ggml's kvalues_mxfp4: 0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8,
// -12), packed as iq4_value's.
INFERTUNE_HD int mxfp4_value(int code) {
  const uint64_t packed = (code & 8) != 0 ? 0xf4f8fafcfdfeff00ull : 0x0c08060403020100ull;
  return static_cast<int8_t>(static_cast<uint8_t>(packed >> (8 * (code & 7))));
}

// MXFP4's block scale from its E8M0 exponent e: 2^(e - 128), exactly (e < 2: the float subnormals 2^-128
// and 2^-127), as kernels/quant/blocks_basic.h's mxfp4_scale.
INFERTUNE_HD float mxfp4_scale(uint32_t e) { return float_from_bits(e < 2 ? 0x00200000u << e : (e - 1) << 23); }

// Value j (0..31) of a 16-byte nibble array: low nibbles hold values 0-15, high nibbles 16-31.
INFERTUNE_HD int nibble(const uint8_t* qs, int j) { return j < 16 ? qs[j] & 0xF : qs[j - 16] >> 4; }

// ---- Plain float types: 32 elements per piece ----

INFERTUNE_HD void decode_f32(const uint8_t* row, int64_t piece, float* out) {
  const uint8_t* p = row + piece * 128;
  for (int j = 0; j < 32; ++j) out[j] = float_from_bits(load_u32(p + 4 * j));
}

INFERTUNE_HD void decode_f16(const uint8_t* row, int64_t piece, float* out) {
  const uint8_t* p = row + piece * 64;
  for (int j = 0; j < 32; ++j) out[j] = load_f16(p + 2 * j);
}

INFERTUNE_HD void decode_bf16(const uint8_t* row, int64_t piece, float* out) {
  const uint8_t* p = row + piece * 64;
  for (int j = 0; j < 32; ++j) out[j] = float_from_bits(load_u16(p + 2 * j) << 16);
}

// ---- 32-value blocks: one block per piece (layouts: kernels/quant/blocks_basic.h) ----

// Q4_0 (18 bytes: d, qs[16]): (q - 8) * d.
INFERTUNE_HD void decode_q4_0(const uint8_t* row, int64_t piece, float* out) {
  const uint8_t* b = row + piece * 18;
  const float d = load_f16(b);
  for (int j = 0; j < 32; ++j) out[j] = mul(static_cast<float>(nibble(b + 2, j) - 8), d);
}

// Q4_1 (20 bytes: d, m, qs[16]): q * d + m.
INFERTUNE_HD void decode_q4_1(const uint8_t* row, int64_t piece, float* out) {
  const uint8_t* b = row + piece * 20;
  const float d = load_f16(b);
  const float m = load_f16(b + 2);
  for (int j = 0; j < 32; ++j) out[j] = add(mul(static_cast<float>(nibble(b + 4, j)), d), m);
}

// Q5_0 (22 bytes: d, qh[4], qs[16]): (q - 16) * d, bit 4 of code j is bit j of qh.
INFERTUNE_HD void decode_q5_0(const uint8_t* row, int64_t piece, float* out) {
  const uint8_t* b = row + piece * 22;
  const float d = load_f16(b);
  const uint32_t high = load_u32(b + 2);
  for (int j = 0; j < 32; ++j) {
    const int q = nibble(b + 6, j) | static_cast<int>(((high >> j) & 1u) << 4);
    out[j] = mul(static_cast<float>(q - 16), d);
  }
}

// Q5_1 (24 bytes: d, m, qh[4], qs[16]): q * d + m.
INFERTUNE_HD void decode_q5_1(const uint8_t* row, int64_t piece, float* out) {
  const uint8_t* b = row + piece * 24;
  const float d = load_f16(b);
  const float m = load_f16(b + 2);
  const uint32_t high = load_u32(b + 4);
  for (int j = 0; j < 32; ++j) {
    const int q = nibble(b + 8, j) | static_cast<int>(((high >> j) & 1u) << 4);
    out[j] = add(mul(static_cast<float>(q), d), m);
  }
}

// Q8_0 (34 bytes: d, qs[32] int8): q * d.
INFERTUNE_HD void decode_q8_0(const uint8_t* row, int64_t piece, float* out) {
  const uint8_t* b = row + piece * 34;
  const float d = load_f16(b);
  for (int j = 0; j < 32; ++j) out[j] = mul(static_cast<float>(static_cast<int8_t>(b[2 + j])), d);
}

// IQ4_NL (18 bytes: d, qs[16]): d * codebook[q].
INFERTUNE_HD void decode_iq4_nl(const uint8_t* row, int64_t piece, float* out) {
  const uint8_t* b = row + piece * 18;
  const float d = load_f16(b);
  for (int j = 0; j < 32; ++j) out[j] = mul(d, static_cast<float>(iq4_value(nibble(b + 2, j))));
}

// MXFP4 (17 bytes: e, qs[16]): mxfp4_scale(e) * codebook[q].
INFERTUNE_HD void decode_mxfp4(const uint8_t* row, int64_t piece, float* out) {
  const uint8_t* b = row + piece * 17;
  const float d = mxfp4_scale(b[0]);
  for (int j = 0; j < 32; ++j) out[j] = mul(d, static_cast<float>(mxfp4_value(nibble(b + 1, j))));
}

// ---- 256-value super-blocks: piece p is sub-range (p % 8) * 32 of block p / 8 (kernels/quant/blocks_k.h) ----

// IQ4_XS (136 bytes: d, scales_h u16, scales_l[4], qs[128]): (d * (ls - 32)) * codebook[q].
INFERTUNE_HD void decode_iq4_xs(const uint8_t* row, int64_t piece, float* out) {
  const uint8_t* b = row + (piece / 8) * 136;
  const int ib = static_cast<int>(piece % 8);
  const float d = load_f16(b);
  const int low = (b[4 + ib / 2] >> (4 * (ib % 2))) & 0xF;
  const int high = static_cast<int>(load_u16(b + 2) >> (2 * ib)) & 3;
  const float dl = mul(d, static_cast<float>((low | (high << 4)) - 32));
  const uint8_t* qs = b + 8 + 16 * ib;
  for (int j = 0; j < 32; ++j) out[j] = mul(dl, static_cast<float>(iq4_value(nibble(qs, j))));
}

// Q2_K (84 bytes: scales[16], qs[64], d, dmin). Piece s reads 2-bit field s % 4 of qs[32 * (s / 4) + l];
// its two 16-value halves use sub-block scales 2s, 2s + 1: dl * q - ml.
INFERTUNE_HD void decode_q2_K(const uint8_t* row, int64_t piece, float* out) {
  const uint8_t* b = row + (piece / 8) * 84;
  const int s = static_cast<int>(piece % 8);
  const float d = load_f16(b + 80);
  const float min = load_f16(b + 82);
  const uint8_t* q = b + 16 + 32 * (s / 4);
  const int shift = 2 * (s % 4);
  for (int part = 0; part < 2; ++part) {
    const uint8_t sc = b[2 * s + part];
    const float dl = mul(d, static_cast<float>(sc & 0xF));
    const float ml = mul(min, static_cast<float>(sc >> 4));
    for (int l = 16 * part; l < 16 * part + 16; ++l) {
      out[l] = sub(mul(dl, static_cast<float>((q[l] >> shift) & 3)), ml);
    }
  }
}

// Q3_K's 16 signed 6-bit scales (biased by 32): see set_scale6 in kernels/quant/q3_K.cpp.
INFERTUNE_HD int q3_K_scale(const uint8_t* packed, int j) {
  const int low = j < 8 ? packed[j] & 0xF : packed[j - 8] >> 4;
  const int high = (packed[8 + j % 4] >> (2 * (j / 4))) & 3;
  return (low | (high << 4)) - 32;
}

// Q3_K (110 bytes: hmask[32], qs[64], scales[12], d). Low 2 bits as Q2_K; a clear bit s of hmask[l]
// subtracts 4 from the code.
INFERTUNE_HD void decode_q3_K(const uint8_t* row, int64_t piece, float* out) {
  const uint8_t* b = row + (piece / 8) * 110;
  const int s = static_cast<int>(piece % 8);
  const float d_all = load_f16(b + 108);
  const uint8_t* hmask = b;
  const uint8_t* q = b + 32 + 32 * (s / 4);
  const int shift = 2 * (s % 4);
  for (int part = 0; part < 2; ++part) {
    const float dl = mul(d_all, static_cast<float>(q3_K_scale(b + 96, 2 * s + part)));
    for (int l = 16 * part; l < 16 * part + 16; ++l) {
      const int code = ((q[l] >> shift) & 3) - ((hmask[l] >> s) & 1 ? 0 : 4);
      out[l] = mul(dl, static_cast<float>(code));
    }
  }
}

// Q4_K / Q5_K's eight 6-bit (scale, min) pairs in 12 bytes: see pack_scales_mins_6bit.
INFERTUNE_HD void scale_min_6bit(const uint8_t* packed, int j, int* scale, int* min) {
  if (j < 4) {
    *scale = packed[j] & 63;
    *min = packed[j + 4] & 63;
  } else {
    *scale = (packed[j + 4] & 0xF) | ((packed[j - 4] >> 6) << 4);
    *min = (packed[j + 4] >> 4) | ((packed[j] >> 6) << 4);
  }
}

// Q4_K (144 bytes: d, dmin, scales[12], qs[128]). Piece s is the low (even s) or high (odd s) nibbles of
// qs[32 * (s / 2) + l]: (d * scale) * q - dmin * min.
INFERTUNE_HD void decode_q4_K(const uint8_t* row, int64_t piece, float* out) {
  const uint8_t* b = row + (piece / 8) * 144;
  const int s = static_cast<int>(piece % 8);
  int scale, min;
  scale_min_6bit(b + 4, s, &scale, &min);
  const float dl = mul(load_f16(b), static_cast<float>(scale));
  const float ml = mul(load_f16(b + 2), static_cast<float>(min));
  const uint8_t* q = b + 16 + 32 * (s / 2);
  const int shift = 4 * (s % 2);
  for (int l = 0; l < 32; ++l) out[l] = sub(mul(dl, static_cast<float>((q[l] >> shift) & 0xF)), ml);
}

// Q5_K (176 bytes: d, dmin, scales[12], qh[32], qs[128]): as Q4_K, plus 16 when bit s of qh[l] is set.
INFERTUNE_HD void decode_q5_K(const uint8_t* row, int64_t piece, float* out) {
  const uint8_t* b = row + (piece / 8) * 176;
  const int s = static_cast<int>(piece % 8);
  int scale, min;
  scale_min_6bit(b + 4, s, &scale, &min);
  const float dl = mul(load_f16(b), static_cast<float>(scale));
  const float ml = mul(load_f16(b + 2), static_cast<float>(min));
  const uint8_t* qh = b + 16;
  const uint8_t* q = b + 48 + 32 * (s / 2);
  const int shift = 4 * (s % 2);
  for (int l = 0; l < 32; ++l) {
    const int code = ((q[l] >> shift) & 0xF) + ((qh[l] >> s) & 1 ? 16 : 0);
    out[l] = sub(mul(dl, static_cast<float>(code)), ml);
  }
}

// Q6_K (210 bytes: ql[128], qh[64], scales[16] int8, d). In half h = s / 4, quarter k = s % 4: low nibble
// (k < 2) or high nibble (k >= 2) of ql[64h + 32(k % 2) + l], top bits 2k of qh[32h + l]:
// (d * scale) * (q - 32), scale 8h + 2k + l / 16.
INFERTUNE_HD void decode_q6_K(const uint8_t* row, int64_t piece, float* out) {
  const uint8_t* b = row + (piece / 8) * 210;
  const int s = static_cast<int>(piece % 8);
  const int half = s / 4;
  const int k = s % 4;
  const float d = load_f16(b + 208);
  const uint8_t* ql = b + 64 * half + 32 * (k % 2);
  const uint8_t* qh = b + 128 + 32 * half;
  const uint8_t* scales = b + 192 + 8 * half + 2 * k;  // int8
  for (int l = 0; l < 32; ++l) {
    const int code = (((ql[l] >> (4 * (k / 2))) & 0xF) | (((qh[l] >> (2 * k)) & 3) << 4)) - 32;
    out[l] = mul(mul(d, static_cast<float>(static_cast<int8_t>(scales[l / 16]))), static_cast<float>(code));
  }
}

}  // namespace block_decode_detail

// Writes values [32 * piece, 32 * piece + 32) of the row that starts at `row` into out[0..32).
template <BlockType T>
INFERTUNE_HD void decode_piece(const uint8_t* row, int64_t piece, float* out) {
  namespace d = block_decode_detail;
  if constexpr (T == BlockType::F32) d::decode_f32(row, piece, out);
  if constexpr (T == BlockType::F16) d::decode_f16(row, piece, out);
  if constexpr (T == BlockType::BF16) d::decode_bf16(row, piece, out);
  if constexpr (T == BlockType::Q4_0) d::decode_q4_0(row, piece, out);
  if constexpr (T == BlockType::Q4_1) d::decode_q4_1(row, piece, out);
  if constexpr (T == BlockType::Q5_0) d::decode_q5_0(row, piece, out);
  if constexpr (T == BlockType::Q5_1) d::decode_q5_1(row, piece, out);
  if constexpr (T == BlockType::Q8_0) d::decode_q8_0(row, piece, out);
  if constexpr (T == BlockType::IQ4_NL) d::decode_iq4_nl(row, piece, out);
  if constexpr (T == BlockType::MXFP4) d::decode_mxfp4(row, piece, out);
  if constexpr (T == BlockType::IQ4_XS) d::decode_iq4_xs(row, piece, out);
  if constexpr (T == BlockType::Q2_K) d::decode_q2_K(row, piece, out);
  if constexpr (T == BlockType::Q3_K) d::decode_q3_K(row, piece, out);
  if constexpr (T == BlockType::Q4_K) d::decode_q4_K(row, piece, out);
  if constexpr (T == BlockType::Q5_K) d::decode_q5_K(row, piece, out);
  if constexpr (T == BlockType::Q6_K) d::decode_q6_K(row, piece, out);
}

// Calls f(BlockTypeTag<T>{}) for the BlockType T of a supported type id: the one switch that every runtime
// dispatch (decode_piece_any, the device kernels) goes through. Returns false for an unsupported id.
template <BlockType T>
struct BlockTypeTag {
  static constexpr BlockType value = T;
};

// Host code passes host lambdas (kernel launches), device code device ones: no execution-space check on f.
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
template <class F>
INFERTUNE_HD bool visit_block_type(uint32_t type_id, F&& f) {
  // clang-format off
  switch (static_cast<BlockType>(type_id)) {
    case BlockType::F32: f(BlockTypeTag<BlockType::F32>{}); return true;
    case BlockType::F16: f(BlockTypeTag<BlockType::F16>{}); return true;
    case BlockType::BF16: f(BlockTypeTag<BlockType::BF16>{}); return true;
    case BlockType::Q4_0: f(BlockTypeTag<BlockType::Q4_0>{}); return true;
    case BlockType::Q4_1: f(BlockTypeTag<BlockType::Q4_1>{}); return true;
    case BlockType::Q5_0: f(BlockTypeTag<BlockType::Q5_0>{}); return true;
    case BlockType::Q5_1: f(BlockTypeTag<BlockType::Q5_1>{}); return true;
    case BlockType::Q8_0: f(BlockTypeTag<BlockType::Q8_0>{}); return true;
    case BlockType::IQ4_NL: f(BlockTypeTag<BlockType::IQ4_NL>{}); return true;
    case BlockType::MXFP4: f(BlockTypeTag<BlockType::MXFP4>{}); return true;
    case BlockType::IQ4_XS: f(BlockTypeTag<BlockType::IQ4_XS>{}); return true;
    case BlockType::Q2_K: f(BlockTypeTag<BlockType::Q2_K>{}); return true;
    case BlockType::Q3_K: f(BlockTypeTag<BlockType::Q3_K>{}); return true;
    case BlockType::Q4_K: f(BlockTypeTag<BlockType::Q4_K>{}); return true;
    case BlockType::Q5_K: f(BlockTypeTag<BlockType::Q5_K>{}); return true;
    case BlockType::Q6_K: f(BlockTypeTag<BlockType::Q6_K>{}); return true;
  }
  // clang-format on
  return false;
}

INFERTUNE_HD bool supported(uint32_t type_id) {
  return visit_block_type(type_id, [](auto) {});
}

// Runtime dispatch for host code and tests; false (out untouched) when the type is not supported.
INFERTUNE_HD bool decode_piece_any(uint32_t type_id, const uint8_t* row, int64_t piece, float* out) {
  return visit_block_type(type_id, [&](auto tag) { decode_piece<decltype(tag)::value>(row, piece, out); });
}

// Values and bytes per block (ggml's type traits for these types).
struct BlockShape {
  uint32_t values;
  uint32_t bytes;
};

INFERTUNE_HD BlockShape block_shape(uint32_t type_id) {
  // clang-format off
  switch (static_cast<BlockType>(type_id)) {
    case BlockType::F32: return {1, 4};
    case BlockType::F16: return {1, 2};
    case BlockType::BF16: return {1, 2};
    case BlockType::Q4_0: return {32, 18};
    case BlockType::Q4_1: return {32, 20};
    case BlockType::Q5_0: return {32, 22};
    case BlockType::Q5_1: return {32, 24};
    case BlockType::Q8_0: return {32, 34};
    case BlockType::IQ4_NL: return {32, 18};
    case BlockType::MXFP4: return {32, 17};
    case BlockType::IQ4_XS: return {256, 136};
    case BlockType::Q2_K: return {256, 84};
    case BlockType::Q3_K: return {256, 110};
    case BlockType::Q4_K: return {256, 144};
    case BlockType::Q5_K: return {256, 176};
    case BlockType::Q6_K: return {256, 210};
  }
  // clang-format on
  return {0, 0};
}

// Bytes of one row of n_cols values (n_cols a multiple of the block size); 0 for an unsupported type.
INFERTUNE_HD uint64_t row_bytes(uint32_t type_id, uint64_t n_cols) {
  const BlockShape shape = block_shape(type_id);
  return shape.values == 0 ? 0 : n_cols / shape.values * shape.bytes;
}

}  // namespace infertune::cuda
