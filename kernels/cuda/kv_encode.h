#pragma once
// Encoders of the KV cache's block types for the host and the CUDA device: 32 floats into one f32, f16,
// bf16, q8_0 or q4_0 block, byte for byte what the reference quantize_row writes (kernels/quant: the same
// roundings, the same order of operations, no fused multiply-adds). The GPU stores new keys and values
// with these; the CPU tests check them against quantize_row, so the device and the CPU caches hold the
// same bytes. C++17, no project headers (see block_decode.h for why).
#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/cuda/block_decode.h"

namespace infertune::cuda {
namespace kv_encode_detail {

INFERTUNE_HD uint32_t bits_of(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}

INFERTUNE_HD float fabs_of(float v) { return v < 0.0f ? -v : v; }
INFERTUNE_HD bool is_nan(float v) { return v != v; }
INFERTUNE_HD float clamp_to(float v, float lo, float hi) { return v < lo ? lo : (v > hi ? hi : v); }

// Rounded multiplies and adds, never fused: block_decode.h's.
using block_decode_detail::add;
using block_decode_detail::mul;

INFERTUNE_HD float div(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}

// Halves away from zero, as std::round.
INFERTUNE_HD float round_half_away(float v) {
#if defined(__CUDA_ARCH__)
  return roundf(v);
#else
  return std::round(v);
#endif
}

// f32 -> f16 bits, round to nearest even; NaN -> quiet NaN, overflow -> inf (kernels/half.h's f32_to_f16).
INFERTUNE_HD uint16_t f16_bits(float f) {
  const uint32_t x = bits_of(f);
  const auto sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);
  if (abs >= 0x47800000u) return static_cast<uint16_t>(sign | 0x7c00u);
  if (abs < 0x38800000u) {
    if (abs < 0x33000000u) return sign;
    const uint32_t exponent = abs >> 23;
    const uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
    const uint32_t drop = 126 - exponent;
    uint32_t q = mantissa >> drop;
    const uint32_t rem = mantissa & ((1u << drop) - 1);
    const uint32_t halfway = 1u << (drop - 1);
    if (rem > halfway || (rem == halfway && (q & 1u))) ++q;
    return static_cast<uint16_t>(sign | q);
  }
  uint32_t h = (abs >> 13) - ((127 - 15) << 10);
  const uint32_t rem = abs & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return static_cast<uint16_t>(sign | h);
}

// f32 -> bf16 bits, round to nearest even; NaN stays a quiet NaN (kernels/half.h's f32_to_bf16).
INFERTUNE_HD uint16_t bf16_bits(float f) {
  const uint32_t x = bits_of(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 64);
  return static_cast<uint16_t>((x + (0x7fffu + ((x >> 16) & 1u))) >> 16);
}

INFERTUNE_HD void put_u16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v & 0xff);
  p[1] = static_cast<uint8_t>(v >> 8);
}

// The value of largest magnitude, the first one on ties.
INFERTUNE_HD float signed_absmax(const float* x) {
  float amax = 0.0f, max = 0.0f;
  for (int j = 0; j < kPieceValues; ++j) {
    if (fabs_of(x[j]) > amax) {
      amax = fabs_of(x[j]);
      max = x[j];
    }
  }
  return max;
}

INFERTUNE_HD uint16_t half_scale_bits(float d) { return f16_bits(clamp_to(d, -65504.0f, 65504.0f)); }

}  // namespace kv_encode_detail

// Bytes of one encoded 32-value block; 0 for a type the cache does not take.
INFERTUNE_HD constexpr int kv_block_bytes(BlockType t) {
  return t == BlockType::F32    ? 128
         : t == BlockType::F16  ? 64
         : t == BlockType::BF16 ? 64
         : t == BlockType::Q8_0 ? 34
         : t == BlockType::Q4_0 ? 18
                                : 0;
}

// Encodes x[0..32) into dst (kv_block_bytes(T) bytes).
template <BlockType T>
INFERTUNE_HD void encode_kv_block(const float* x, uint8_t* dst) {
  using namespace kv_encode_detail;
  if constexpr (T == BlockType::F32) {
    for (int j = 0; j < kPieceValues; ++j) {
      const uint32_t b = bits_of(x[j]);
      for (int k = 0; k < 4; ++k) dst[4 * j + k] = static_cast<uint8_t>(b >> (8 * k));
    }
  } else if constexpr (T == BlockType::F16) {
    for (int j = 0; j < kPieceValues; ++j) put_u16(dst + 2 * j, f16_bits(x[j]));
  } else if constexpr (T == BlockType::BF16) {
    for (int j = 0; j < kPieceValues; ++j) put_u16(dst + 2 * j, bf16_bits(x[j]));
  } else if constexpr (T == BlockType::Q8_0) {
    const float d = div(fabs_of(signed_absmax(x)), 127.0f);
    const float id = d != 0.0f ? div(1.0f, d) : 0.0f;
    put_u16(dst, half_scale_bits(d));
    for (int j = 0; j < kPieceValues; ++j) {
      const float v = mul(x[j], id);
      const int q = is_nan(v) ? 0 : static_cast<int>(round_half_away(clamp_to(v, -128.0f, 127.0f)));
      dst[2 + j] = static_cast<uint8_t>(static_cast<int8_t>(q));
    }
  } else {
    static_assert(T == BlockType::Q4_0, "the KV cache takes f32, f16, bf16, q8_0 and q4_0");
    const float d = div(signed_absmax(x), -8.0f);
    const float id = d != 0.0f ? div(1.0f, d) : 0.0f;
    put_u16(dst, half_scale_bits(d));
    uint8_t codes[kPieceValues];
    for (int j = 0; j < kPieceValues; ++j) {
      const float v = add(mul(x[j], id), 8.5f);
      codes[j] = static_cast<uint8_t>(!(v > 0.0f) ? 0 : (v >= 15.0f ? 15 : static_cast<int>(v)));
    }
    for (int j = 0; j < kPieceValues / 2; ++j) {
      dst[2 + j] = static_cast<uint8_t>(codes[j] | (codes[j + kPieceValues / 2] << 4));
    }
  }
}

// Calls f(BlockTypeTag<T>{}) for a type the KV cache takes (f32, f16, bf16, q8_0, q4_0): the one switch the
// cache's runtime dispatch goes through (the encoder below, the device's store and attention kernels).
// Returns false for any other type.
// Host code passes host lambdas (kernel launches), device code device ones: no execution-space check on f.
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
template <class F>
INFERTUNE_HD bool visit_kv_type(uint32_t type_id, F&& f) {
  // clang-format off
  switch (static_cast<BlockType>(type_id)) {
    case BlockType::F32: f(BlockTypeTag<BlockType::F32>{}); return true;
    case BlockType::F16: f(BlockTypeTag<BlockType::F16>{}); return true;
    case BlockType::BF16: f(BlockTypeTag<BlockType::BF16>{}); return true;
    case BlockType::Q8_0: f(BlockTypeTag<BlockType::Q8_0>{}); return true;
    case BlockType::Q4_0: f(BlockTypeTag<BlockType::Q4_0>{}); return true;
    default: return false;
  }
  // clang-format on
}

// Runtime dispatch for host code and tests: false when the cache does not take the type.
INFERTUNE_HD bool encode_kv_block_any(uint32_t type_id, const float* x, uint8_t* dst) {
  return visit_kv_type(type_id, [&](auto tag) { encode_kv_block<decltype(tag)::value>(x, dst); });
}

}  // namespace infertune::cuda
