#pragma once
// Chunk decoders of the fast matrix-vector kernels (kernels/cuda/matvec_fast.cu), shared by the host and the
// device: the same values as decode_piece (block_decode.h), read with aligned word loads instead of bytes.
//
// A chunk is what one thread decodes at a time: kValues values of one block, in kRuns runs of contiguous
// columns (so the activations load as float4). Fields are read as aligned 32-bit words (16-byte uint4 for
// the types whose blocks are a multiple of 16 bytes), and a 2-byte-aligned span is two 4-byte-aligned words
// joined by a funnel shift. Codes become floats without an int-to-float conversion: the byte b placed under
// the exponent of 2^23 is the float 2^23 + b, and subtracting 2^23 (+ the format's offset) is exact.
//
// Rounding: the same multiplies as decode_piece. Where a product is exact (Q4_K / Q5_K: d * scale has at
// most 17 significant bits, times a code below 32 at most 22), d * scale * q - d_min * min is one fused
// multiply-add: the single rounding is the one the reference's subtraction makes, so the bits agree.
// tests/kernels/cuda_matvec_fast_decode_test.cpp checks every chunk against decode_piece on the host.
// On the device F16 uses the hardware conversion, which is exact; it differs from f16_bits_to_f32 only in
// the payload of a NaN, which no product keeps.
#include <cstdint>
#include <cstring>

#include "kernels/cuda/block_decode.h"

#if defined(__CUDACC__)
#include <cuda_fp16.h>
#endif

namespace infertune::cuda {
namespace fast_decode_detail {

using block_decode_detail::f16_bits_to_f32;
using block_decode_detail::float_from_bits;
using block_decode_detail::mul;

// p 4-byte aligned.
INFERTUNE_HD uint32_t load_word(const uint8_t* p) {
#if defined(__CUDA_ARCH__)
  return __ldg(reinterpret_cast<const unsigned int*>(p));
#else
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
#endif
}

// p 2-byte aligned.
INFERTUNE_HD uint32_t load_half_word(const uint8_t* p) {
#if defined(__CUDA_ARCH__)
  return __ldg(reinterpret_cast<const unsigned short*>(p));
#else
  uint16_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
#endif
}

// p 16-byte aligned: words[0..4) = the 16 bytes at p.
INFERTUNE_HD void load_quad(const uint8_t* p, uint32_t* words) {
#if defined(__CUDA_ARCH__)
  const uint4 v = __ldg(reinterpret_cast<const uint4*>(p));
  words[0] = v.x;
  words[1] = v.y;
  words[2] = v.z;
  words[3] = v.w;
#else
  std::memcpy(words, p, 16);
#endif
}

// The 32 bits at byte offset `shift_bytes` (0 or 2) of the 64-bit little-endian lo:hi.
INFERTUNE_HD uint32_t join(uint32_t lo, uint32_t hi, uint32_t shift_bytes) {
#if defined(__CUDA_ARCH__)
  return __funnelshift_r(lo, hi, 8 * shift_bytes);
#else
  return shift_bytes == 0 ? lo : (lo >> (8 * shift_bytes)) | (hi << (32 - 8 * shift_bytes));
#endif
}

// The byte offset (0 or 2) of a 2-byte-aligned address within its 4-byte word.
INFERTUNE_HD uint32_t misalignment(const uint8_t* p) {
  return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(p) & 2u);
}

// words[0..4) = the 16 bytes at p (2-byte aligned), from five aligned words: the four bytes after the span
// are read too, so the caller guarantees they exist.
INFERTUNE_HD void load_span16(const uint8_t* p, uint32_t* words) {
  const uint32_t off = misalignment(p);
  const uint8_t* base = p - off;
  uint32_t w[5];
  for (int i = 0; i < 5; ++i) w[i] = load_word(base + 4 * i);
  for (int i = 0; i < 4; ++i) words[i] = join(w[i], w[i + 1], off);
}

// 2^23 + byte i of `word` as a float's bits (a byte permute on the device).
INFERTUNE_HD uint32_t magic_byte(uint32_t word, int i) {
#if defined(__CUDA_ARCH__)
  return __byte_perm(word, 0x4B000000u, 0x7440u | static_cast<unsigned>(i));
#else
  return 0x4B000000u | ((word >> (8 * i)) & 0xFFu);
#endif
}

// byte i of `word` minus `offset` (an integer below 2^8), exactly, as a float.
INFERTUNE_HD float byte_minus(uint32_t word, int i, float offset) {
  return block_decode_detail::sub(float_from_bits(magic_byte(word, i)), 8388608.0f + offset);
}

INFERTUNE_HD float fma_exact_product(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(a, b, c);
#else
  return __builtin_fmaf(a, b, c);
#endif
}

INFERTUNE_HD float half_to_float(uint32_t bits) {
#if defined(__CUDA_ARCH__)
  return __half2float(__ushort_as_half(static_cast<unsigned short>(bits)));
#else
  return f16_bits_to_f32(bits);
#endif
}

// Q4_K / Q5_K's (scale, min) pair j from the header words h[1..3] (bytes 4..15): scale_min_6bit on words.
INFERTUNE_HD void scale_min_words(const uint32_t* h, int j, int* scale, int* min) {
  if (j < 4) {
    *scale = static_cast<int>((h[1] >> (8 * j)) & 63u);
    *min = static_cast<int>((h[2] >> (8 * j)) & 63u);
  } else {
    const int b = 8 * (j - 4);
    *scale = static_cast<int>(((h[3] >> b) & 0xFu) | (((h[1] >> (b + 6)) & 3u) << 4));
    *min = static_cast<int>(((h[3] >> (b + 4)) & 0xFu) | (((h[2] >> (b + 6)) & 3u) << 4));
  }
}

// Sixteen values d_scale * code - d_min from four words of 4-bit or 5-bit codes (one per byte).
INFERTUNE_HD void scaled_codes16(const uint32_t* codes, float d_scale, float d_min, float* out) {
  for (int k = 0; k < 4; ++k) {
    for (int b = 0; b < 4; ++b) out[4 * k + b] = fma_exact_product(d_scale, byte_minus(codes[k], b, 0.0f), -d_min);
  }
}

}  // namespace fast_decode_detail

template <BlockType T>
struct FastDecoder;

// Q4_K (144 bytes: d, dmin, scales[12] | qs[128]), 16-byte aligned. Chunk c = 2g + h reads qs bytes
// [16c, 16c + 16) = byte l = 16h + i of group g: low nibbles are sub-block 2g (columns 64g + l), high
// nibbles sub-block 2g + 1 (columns 64g + 32 + l).
template <>
struct FastDecoder<BlockType::Q4_K> {
  static constexpr int kBlockValues = 256, kBlockBytes = 144, kChunks = 8, kValues = 32, kRuns = 2;
  static constexpr int kAlignment = 16;
  INFERTUNE_HD static int run_column(int chunk, int run) { return 64 * (chunk / 2) + 16 * (chunk % 2) + 32 * run; }
  INFERTUNE_HD static void decode(const uint8_t* block, int chunk, float* out) {
    namespace d = fast_decode_detail;
    uint32_t h[4], q[4];
    d::load_quad(block, h);
    d::load_quad(block + 16 + 16 * chunk, q);
    const int g = chunk / 2;
    const float dd = d::f16_bits_to_f32(h[0] & 0xFFFFu);
    const float dmin = d::f16_bits_to_f32(h[0] >> 16);
    for (int half = 0; half < 2; ++half) {
      int scale, min;
      d::scale_min_words(h, 2 * g + half, &scale, &min);
      uint32_t codes[4];
      for (int k = 0; k < 4; ++k) codes[k] = (q[k] >> (4 * half)) & 0x0F0F0F0Fu;
      d::scaled_codes16(codes, d::mul(dd, static_cast<float>(scale)), d::mul(dmin, static_cast<float>(min)),
                        out + 16 * half);
    }
  }
};

// Q5_K (176 bytes: d, dmin, scales[12] | qh[32] | qs[128]), 16-byte aligned: as Q4_K, plus 16 where bit s
// of qh[l] is set (s the sub-block).
template <>
struct FastDecoder<BlockType::Q5_K> {
  static constexpr int kBlockValues = 256, kBlockBytes = 176, kChunks = 8, kValues = 32, kRuns = 2;
  static constexpr int kAlignment = 16;
  INFERTUNE_HD static int run_column(int chunk, int run) { return 64 * (chunk / 2) + 16 * (chunk % 2) + 32 * run; }
  INFERTUNE_HD static void decode(const uint8_t* block, int chunk, float* out) {
    namespace d = fast_decode_detail;
    uint32_t h[4], qh[4], q[4];
    d::load_quad(block, h);
    d::load_quad(block + 16 + 16 * (chunk % 2), qh);
    d::load_quad(block + 48 + 16 * chunk, q);
    const int g = chunk / 2;
    const float dd = d::f16_bits_to_f32(h[0] & 0xFFFFu);
    const float dmin = d::f16_bits_to_f32(h[0] >> 16);
    for (int half = 0; half < 2; ++half) {
      const int s = 2 * g + half;
      int scale, min;
      d::scale_min_words(h, s, &scale, &min);
      uint32_t codes[4];
      for (int k = 0; k < 4; ++k) {
        codes[k] = ((q[k] >> (4 * half)) & 0x0F0F0F0Fu) | (((qh[k] >> s) & 0x01010101u) << 4);
      }
      d::scaled_codes16(codes, d::mul(dd, static_cast<float>(scale)), d::mul(dmin, static_cast<float>(min)),
                        out + 16 * half);
    }
  }
};

// Q6_K (210 bytes: ql[128] | qh[64] | scales[16] int8 | d), 2-byte aligned. Chunk c: half = c / 4, pair
// kk = (c / 2) % 2, m = c % 2 reads ql bytes 64 half + 32 kk + 16 m + i and qh bytes 32 half + 16 m + i:
// low nibbles with qh bits 2kk are quarter k = kk, high nibbles with bits 2kk + 4 quarter k = kk + 2;
// columns 32 (4 half + k) + 16 m + i, scale 8 half + 2k + m: (d * scale) * (code - 32).
template <>
struct FastDecoder<BlockType::Q6_K> {
  static constexpr int kBlockValues = 256, kBlockBytes = 210, kChunks = 8, kValues = 32, kRuns = 2;
  static constexpr int kAlignment = 2;
  INFERTUNE_HD static int run_column(int chunk, int run) {
    return 32 * (4 * (chunk / 4) + (chunk / 2) % 2 + 2 * run) + 16 * (chunk % 2);
  }
  INFERTUNE_HD static void decode(const uint8_t* block, int chunk, float* out) {
    namespace d = fast_decode_detail;
    const int half = chunk / 4, kk = (chunk / 2) % 2, m = chunk % 2;
    uint32_t ql[4], qh[4];
    d::load_span16(block + 64 * half + 32 * kk + 16 * m, ql);  // the 4 bytes after either span are in the block
    d::load_span16(block + 128 + 32 * half + 16 * m, qh);
    const float dd = d::f16_bits_to_f32(d::load_half_word(block + 208));
    const uint8_t* scales = block + 192 + 8 * half + 2 * kk + m;
    for (int run = 0; run < 2; ++run) {
      const float d_scale = d::mul(dd, static_cast<float>(static_cast<int8_t>(scales[4 * run])));
      for (int k = 0; k < 4; ++k) {
        const uint32_t codes =
            ((ql[k] >> (4 * run)) & 0x0F0F0F0Fu) | (((qh[k] >> (2 * kk + 4 * run)) & 0x03030303u) << 4);
        for (int b = 0; b < 4; ++b) out[16 * run + 4 * k + b] = d::mul(d_scale, d::byte_minus(codes, b, 32.0f));
      }
    }
  }
};

// Q4_0 (18 bytes: d, qs[16]), 2-byte aligned; one chunk per block: (q - 8) * d, low nibbles columns 0-15,
// high nibbles 16-31. The 18 bytes are four aligned words and a half word: d first or last.
template <>
struct FastDecoder<BlockType::Q4_0> {
  static constexpr int kBlockValues = 32, kBlockBytes = 18, kChunks = 1, kValues = 32, kRuns = 2;
  static constexpr int kAlignment = 2;
  INFERTUNE_HD static int run_column(int, int run) { return 16 * run; }
  INFERTUNE_HD static void decode(const uint8_t* block, int, float* out) {
    namespace d = fast_decode_detail;
    const uint32_t off = d::misalignment(block);  // 2: d fills the first half word, the rest is aligned
    uint32_t w[4];
    for (int i = 0; i < 4; ++i) w[i] = d::load_word(block + off + 4 * i);
    const uint32_t edge = d::load_half_word(block + (off != 0 ? 0 : 16));
    const float dd = d::f16_bits_to_f32(off != 0 ? edge : w[0] & 0xFFFFu);
    const uint32_t shift = off != 0 ? 0 : 2;
    for (int i = 0; i < 4; ++i) {
      const uint32_t qs = d::join(w[i], i < 3 ? w[i + 1] : edge, shift);
      const uint32_t low = qs & 0x0F0F0F0Fu, high = (qs >> 4) & 0x0F0F0F0Fu;
      for (int b = 0; b < 4; ++b) {
        out[4 * i + b] = d::mul(d::byte_minus(low, b, 8.0f), dd);
        out[16 + 4 * i + b] = d::mul(d::byte_minus(high, b, 8.0f), dd);
      }
    }
  }
};

// Q8_0 (34 bytes: d, qs[32] int8), 2-byte aligned; four chunks of 8 per block (so that a warp's loads
// cover a contiguous span): chunk k is qs bytes [8k, 8k + 8) = block bytes [8k + 2, 8k + 10), q * d.
template <>
struct FastDecoder<BlockType::Q8_0> {
  static constexpr int kBlockValues = 32, kBlockBytes = 34, kChunks = 4, kValues = 8, kRuns = 1;
  static constexpr int kAlignment = 2;
  INFERTUNE_HD static int run_column(int chunk, int) { return 8 * chunk; }
  INFERTUNE_HD static void decode(const uint8_t* block, int chunk, float* out) {
    namespace d = fast_decode_detail;
    const uint32_t off = d::misalignment(block);  // 2: the codes start on a word
    const uint8_t* span = block + off + 8 * chunk;
    const uint32_t w0 = d::load_word(span), w1 = d::load_word(span + 4);
    const uint32_t edge = d::load_half_word(block + (off != 0 ? 0 : 8 * chunk + 8));
    const float dd = d::f16_bits_to_f32(d::load_half_word(block));
    const uint32_t shift = off != 0 ? 0 : 2;
    const uint32_t qs[2] = {d::join(w0, w1, shift) ^ 0x80808080u, d::join(w1, edge, shift) ^ 0x80808080u};
    for (int i = 0; i < 2; ++i) {
      for (int b = 0; b < 4; ++b) out[4 * i + b] = d::mul(d::byte_minus(qs[i], b, 128.0f), dd);
    }
  }
};

// F16, 16-byte aligned; 32 values (64 bytes) per block and chunk.
template <>
struct FastDecoder<BlockType::F16> {
  static constexpr int kBlockValues = 32, kBlockBytes = 64, kChunks = 1, kValues = 32, kRuns = 1;
  static constexpr int kAlignment = 16;
  INFERTUNE_HD static int run_column(int, int) { return 0; }
  INFERTUNE_HD static void decode(const uint8_t* block, int, float* out) {
    namespace d = fast_decode_detail;
    for (int i = 0; i < 4; ++i) {
      uint32_t w[4];
      d::load_quad(block + 16 * i, w);
      for (int k = 0; k < 4; ++k) {
        out[8 * i + 2 * k] = d::half_to_float(w[k] & 0xFFFFu);
        out[8 * i + 2 * k + 1] = d::half_to_float(w[k] >> 16);
      }
    }
  }
};

// The types with a FastDecoder (ggml type ids).
INFERTUNE_HD bool fast_decoder_exists(uint32_t type_id) {
  switch (static_cast<BlockType>(type_id)) {
    case BlockType::Q4_K:
    case BlockType::Q5_K:
    case BlockType::Q6_K:
    case BlockType::Q4_0:
    case BlockType::Q8_0:
    case BlockType::F16:
      return true;
    default:
      return false;
  }
}

}  // namespace infertune::cuda
