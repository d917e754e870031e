#pragma once
// A piece of a quantized GGUF row (32 values, block_decode.h) in integer form, for products in int8
// arithmetic (the batched int8 path, linear_int8.cu): in each 16-value half h of the piece, value j is
//   scale[h] * q[j] + offset[h]
// with q a small integer (int8), exactly as the quantization stores it. A dot product with int8 activations
// is then integer work (dp4a) per half, and one multiply-add of the scale and the offset -- llama.cpp's MMQ
// idea, on the same pieces every other kernel here builds on.
//
// The float operations that form scale and offset are those of decode_piece, in the same order, so
// scale[h] * q[j] + offset[h] gives decode_piece's value exactly (only a zero may lose its sign):
// tests/kernels/cuda_block_decode_int8_test.cpp.
// The plain float types (F32, F16, BF16) have no integer form: decode_piece_int8 returns false for them.
#include <cstdint>

#include "kernels/cuda/block_decode.h"

namespace infertune::cuda {

struct IntPiece {
  int8_t q[kPieceValues];
  float scale[2];   // per 16-value half
  float offset[2];  // per half; 0 for the symmetric formats
};

namespace block_decode_int8_detail {

using namespace block_decode_detail;

INFERTUNE_HD void uniform(IntPiece& out, float scale, float offset) {
  out.scale[0] = out.scale[1] = scale;
  out.offset[0] = out.offset[1] = offset;
}

INFERTUNE_HD void q4_0(const uint8_t* row, int64_t piece, IntPiece& out) {
  const uint8_t* b = row + piece * 18;
  for (int j = 0; j < 32; ++j) out.q[j] = static_cast<int8_t>(nibble(b + 2, j) - 8);
  uniform(out, load_f16(b), 0.0f);
}

INFERTUNE_HD void q4_1(const uint8_t* row, int64_t piece, IntPiece& out) {
  const uint8_t* b = row + piece * 20;
  for (int j = 0; j < 32; ++j) out.q[j] = static_cast<int8_t>(nibble(b + 4, j));
  uniform(out, load_f16(b), load_f16(b + 2));
}

INFERTUNE_HD void q5_0(const uint8_t* row, int64_t piece, IntPiece& out) {
  const uint8_t* b = row + piece * 22;
  const uint32_t high = load_u32(b + 2);
  for (int j = 0; j < 32; ++j) {
    out.q[j] = static_cast<int8_t>((nibble(b + 6, j) | static_cast<int>(((high >> j) & 1u) << 4)) - 16);
  }
  uniform(out, load_f16(b), 0.0f);
}

INFERTUNE_HD void q5_1(const uint8_t* row, int64_t piece, IntPiece& out) {
  const uint8_t* b = row + piece * 24;
  const uint32_t high = load_u32(b + 4);
  for (int j = 0; j < 32; ++j) {
    out.q[j] = static_cast<int8_t>(nibble(b + 8, j) | static_cast<int>(((high >> j) & 1u) << 4));
  }
  uniform(out, load_f16(b), load_f16(b + 2));
}

INFERTUNE_HD void q8_0(const uint8_t* row, int64_t piece, IntPiece& out) {
  const uint8_t* b = row + piece * 34;
  for (int j = 0; j < 32; ++j) out.q[j] = static_cast<int8_t>(b[2 + j]);
  uniform(out, load_f16(b), 0.0f);
}

INFERTUNE_HD void iq4_nl(const uint8_t* row, int64_t piece, IntPiece& out) {
  const uint8_t* b = row + piece * 18;
  for (int j = 0; j < 32; ++j) out.q[j] = static_cast<int8_t>(iq4_value(nibble(b + 2, j)));
  uniform(out, load_f16(b), 0.0f);
}

INFERTUNE_HD void mxfp4(const uint8_t* row, int64_t piece, IntPiece& out) {
  const uint8_t* b = row + piece * 17;
  for (int j = 0; j < 32; ++j) out.q[j] = static_cast<int8_t>(mxfp4_value(nibble(b + 1, j)));
  uniform(out, mxfp4_scale(b[0]), 0.0f);
}

INFERTUNE_HD void iq4_xs(const uint8_t* row, int64_t piece, IntPiece& out) {
  const uint8_t* b = row + (piece / 8) * 136;
  const int ib = static_cast<int>(piece % 8);
  const int low = (b[4 + ib / 2] >> (4 * (ib % 2))) & 0xF;
  const int high = static_cast<int>(load_u16(b + 2) >> (2 * ib)) & 3;
  const uint8_t* qs = b + 8 + 16 * ib;
  for (int j = 0; j < 32; ++j) out.q[j] = static_cast<int8_t>(iq4_value(nibble(qs, j)));
  uniform(out, mul(load_f16(b), static_cast<float>((low | (high << 4)) - 32)), 0.0f);
}

// dl * q - ml: the offset is -ml (x - y and x + (-y) are the same float operation).
INFERTUNE_HD void q2_K(const uint8_t* row, int64_t piece, IntPiece& out) {
  const uint8_t* b = row + (piece / 8) * 84;
  const int s = static_cast<int>(piece % 8);
  const float d = load_f16(b + 80);
  const float min = load_f16(b + 82);
  const uint8_t* q = b + 16 + 32 * (s / 4);
  const int shift = 2 * (s % 4);
  for (int part = 0; part < 2; ++part) {
    const uint8_t sc = b[2 * s + part];
    out.scale[part] = mul(d, static_cast<float>(sc & 0xF));
    out.offset[part] = -mul(min, static_cast<float>(sc >> 4));
  }
  for (int l = 0; l < 32; ++l) out.q[l] = static_cast<int8_t>((q[l] >> shift) & 3);
}

INFERTUNE_HD void q3_K(const uint8_t* row, int64_t piece, IntPiece& out) {
  const uint8_t* b = row + (piece / 8) * 110;
  const int s = static_cast<int>(piece % 8);
  const float d_all = load_f16(b + 108);
  const uint8_t* hmask = b;
  const uint8_t* q = b + 32 + 32 * (s / 4);
  const int shift = 2 * (s % 4);
  for (int part = 0; part < 2; ++part) {
    out.scale[part] = mul(d_all, static_cast<float>(q3_K_scale(b + 96, 2 * s + part)));
    out.offset[part] = 0.0f;
  }
  for (int l = 0; l < 32; ++l) {
    out.q[l] = static_cast<int8_t>(((q[l] >> shift) & 3) - ((hmask[l] >> s) & 1 ? 0 : 4));
  }
}

INFERTUNE_HD void q4_K(const uint8_t* row, int64_t piece, IntPiece& out) {
  const uint8_t* b = row + (piece / 8) * 144;
  const int s = static_cast<int>(piece % 8);
  int scale, min;
  scale_min_6bit(b + 4, s, &scale, &min);
  const uint8_t* q = b + 16 + 32 * (s / 2);
  const int shift = 4 * (s % 2);
  for (int l = 0; l < 32; ++l) out.q[l] = static_cast<int8_t>((q[l] >> shift) & 0xF);
  uniform(out, mul(load_f16(b), static_cast<float>(scale)), -mul(load_f16(b + 2), static_cast<float>(min)));
}

INFERTUNE_HD void q5_K(const uint8_t* row, int64_t piece, IntPiece& out) {
  const uint8_t* b = row + (piece / 8) * 176;
  const int s = static_cast<int>(piece % 8);
  int scale, min;
  scale_min_6bit(b + 4, s, &scale, &min);
  const uint8_t* qh = b + 16;
  const uint8_t* q = b + 48 + 32 * (s / 2);
  const int shift = 4 * (s % 2);
  for (int l = 0; l < 32; ++l) {
    out.q[l] = static_cast<int8_t>(((q[l] >> shift) & 0xF) + ((qh[l] >> s) & 1 ? 16 : 0));
  }
  uniform(out, mul(load_f16(b), static_cast<float>(scale)), -mul(load_f16(b + 2), static_cast<float>(min)));
}

INFERTUNE_HD void q6_K(const uint8_t* row, int64_t piece, IntPiece& out) {
  const uint8_t* b = row + (piece / 8) * 210;
  const int s = static_cast<int>(piece % 8);
  const int half = s / 4;
  const int k = s % 4;
  const float d = load_f16(b + 208);
  const uint8_t* ql = b + 64 * half + 32 * (k % 2);
  const uint8_t* qh = b + 128 + 32 * half;
  const uint8_t* scales = b + 192 + 8 * half + 2 * k;  // int8
  for (int part = 0; part < 2; ++part) {
    out.scale[part] = mul(d, static_cast<float>(static_cast<int8_t>(scales[part])));
    out.offset[part] = 0.0f;
  }
  for (int l = 0; l < 32; ++l) {
    out.q[l] = static_cast<int8_t>((((ql[l] >> (4 * (k / 2))) & 0xF) | (((qh[l] >> (2 * k)) & 3) << 4)) - 32);
  }
}

}  // namespace block_decode_int8_detail

// Whether T has an integer form (every quantized type; not F32, F16, BF16).
template <BlockType T>
INFERTUNE_HD constexpr bool has_int8_form() {
  return T != BlockType::F32 && T != BlockType::F16 && T != BlockType::BF16;
}

// Piece `piece` of the row at `row` in integer form; false (out untouched) for a type without one.
template <BlockType T>
INFERTUNE_HD bool decode_piece_int8(const uint8_t* row, int64_t piece, IntPiece& out) {
  namespace d = block_decode_int8_detail;
  if constexpr (T == BlockType::Q4_0) d::q4_0(row, piece, out);
  if constexpr (T == BlockType::Q4_1) d::q4_1(row, piece, out);
  if constexpr (T == BlockType::Q5_0) d::q5_0(row, piece, out);
  if constexpr (T == BlockType::Q5_1) d::q5_1(row, piece, out);
  if constexpr (T == BlockType::Q8_0) d::q8_0(row, piece, out);
  if constexpr (T == BlockType::IQ4_NL) d::iq4_nl(row, piece, out);
  if constexpr (T == BlockType::MXFP4) d::mxfp4(row, piece, out);
  if constexpr (T == BlockType::IQ4_XS) d::iq4_xs(row, piece, out);
  if constexpr (T == BlockType::Q2_K) d::q2_K(row, piece, out);
  if constexpr (T == BlockType::Q3_K) d::q3_K(row, piece, out);
  if constexpr (T == BlockType::Q4_K) d::q4_K(row, piece, out);
  if constexpr (T == BlockType::Q5_K) d::q5_K(row, piece, out);
  if constexpr (T == BlockType::Q6_K) d::q6_K(row, piece, out);
  return has_int8_form<T>();
}

// Runtime dispatch for host code and tests.
INFERTUNE_HD bool decode_piece_int8_any(uint32_t type_id, const uint8_t* row, int64_t piece, IntPiece& out) {
  bool done = false;
  visit_block_type(type_id, [&](auto tag) { done = decode_piece_int8<decltype(tag)::value>(row, piece, out); });
  return done;
}

}  // namespace infertune::cuda
