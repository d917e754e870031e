#include "kernels/matmul/interleaved_rows.h"

#include <cstring>

#include "kernels/quant/kquant_search.h"

namespace infertune {
namespace {

constexpr uint32_t kLowNibbles = 0x0F0F0F0Fu;

uint32_t u32_at(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

void store_u32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }

// The 4 interleaved code bytes of 8 values whose codes are the low (or `high`) nibbles of 8 file bytes:
// values 0-3 in the low nibbles, 4-7 in the high ones.
uint32_t lane_codes(const uint8_t* eight, bool high) {
  const uint32_t a = u32_at(eight), b = u32_at(eight + 4);
  if (!high) return (a & kLowNibbles) | ((b & kLowNibbles) << 4);
  return ((a >> 4) & kLowNibbles) | (b & ~kLowNibbles);
}

// The inverse: the 8 file bytes' low (or `high`) nibbles from 4 interleaved code bytes; the other nibbles kept.
void file_codes(uint32_t lane, bool high, uint8_t* eight) {
  uint32_t a = u32_at(eight), b = u32_at(eight + 4);
  if (!high) {
    a = (a & ~kLowNibbles) | (lane & kLowNibbles);
    b = (b & ~kLowNibbles) | ((lane >> 4) & kLowNibbles);
  } else {
    a = (a & kLowNibbles) | ((lane & kLowNibbles) << 4);
    b = (b & kLowNibbles) | (lane & ~kLowNibbles);
  }
  store_u32(eight, a);
  store_u32(eight + 4, b);
}

// Q4_K's sub-block j (32 values) is the low (j even) or high (j odd) nibbles of qs[32 (j / 2) ..]; quarter i
// of it, 8 bytes from 8i.
const uint8_t* q4k_quarter(const uint8_t* qs, int j, int i) { return qs + 32 * (j / 2) + 8 * i; }
uint8_t* q4k_quarter(uint8_t* qs, int j, int i) { return qs + 32 * (j / 2) + 8 * i; }

void interleave_q4k_block(const uint8_t* const (&blocks)[kInterleavedRows], uint8_t* out) {
  uint8_t scales[64], mins[64];
  for (int r = 0; r < 8; ++r) {
    const uint8_t* w = blocks[r];
    std::memcpy(out + 2 * r, w, 2);           // d
    std::memcpy(out + 16 + 2 * r, w + 2, 2);  // dmin
    for (int j = 0; j < 8; ++j)
      kquant::unpack_scale_min_6bit(j, w + 4, &scales[interleaved_scale_slot(j, r)],
                                    &mins[interleaved_scale_slot(j, r)]);
    for (int j = 0; j < 8; ++j) {
      for (int i = 0; i < 4; ++i) {
        store_u32(out + 128 + 128 * j + 32 * i + 4 * r, lane_codes(q4k_quarter(w + 16, j, i), j % 2 == 1));
      }
    }
  }
  for (int k = 0; k < 32; ++k) {
    out[32 + k] = static_cast<uint8_t>((scales[k] & 15) | (scales[k + 32] & 15) << 4);
    out[64 + k] = static_cast<uint8_t>((mins[k] & 15) | (mins[k + 32] & 15) << 4);
    out[96 + k] = static_cast<uint8_t>(scales[k] >> 4 | (scales[k + 32] >> 4) << 2 | (mins[k] >> 4) << 4 |
                                       (mins[k + 32] >> 4) << 6);
  }
}

// The 6-bit scale or min at slot k of an interleaved super-block (low: byte offset of its low nibbles, 32 or
// 64; shift: where its top 2 bits sit in the high-bits byte, 0-6).
uint8_t q4k_six_bits(const uint8_t* group_block, int k, size_t low, int high_shift) {
  const int byte = k % 32;
  const uint8_t low4 = k < 32 ? group_block[low + byte] & 15 : group_block[low + byte] >> 4;
  return static_cast<uint8_t>(low4 | ((group_block[96 + byte] >> high_shift) & 3) << 4);
}

// Q4_0 (18 bytes: f16 d, qs[16]): value v < 16 is the low nibble of qs[v], 16 + v the high one; quarter i
// (values 8i..8i+7) is the low (i < 2) or high nibbles of qs[8 (i % 2) ..].
void interleave_q4_0_block(const uint8_t* const (&blocks)[kInterleavedRows], uint8_t* out) {
  for (int r = 0; r < 8; ++r) {
    std::memcpy(out + 2 * r, blocks[r], 2);
    for (int i = 0; i < 4; ++i) store_u32(out + 16 + 32 * i + 4 * r, lane_codes(blocks[r] + 2 + 8 * (i % 2), i >= 2));
  }
}

// Q8_0 (34 bytes: f16 d, int8 qs[32]): quarter-pair i is qs[4i..4i+4).
void interleave_q8_0_block(const uint8_t* const (&blocks)[kInterleavedRows], uint8_t* out) {
  for (int r = 0; r < 8; ++r) {
    std::memcpy(out + 2 * r, blocks[r], 2);
    for (int i = 0; i < 8; ++i) std::memcpy(out + 16 + 32 * i + 4 * r, blocks[r] + 2 + 4 * i, 4);
  }
}

// Q6_K (210 bytes: ql[128], qh[64], int8 scales[16], f16 d). Value v of half h = v / 128, quarter k = v % 128 / 32,
// l = v % 32: low 4 bits in nibble k / 2 of ql[64h + 32 (k % 2) + l], top 2 bits at bit 2k of qh[32h + l].
struct Q6KCodeBits {
  size_t ql, qh;
  int nibble_shift, high_shift;
};

Q6KCodeBits q6k_code_bits(int v) {
  const int h = v / 128, k = v % 128 / 32, l = v % 32;
  return {static_cast<size_t>(64 * h + 32 * (k % 2) + l), static_cast<size_t>(128 + 32 * h + l), 4 * (k / 2), 2 * k};
}

uint8_t q6k_code(const uint8_t* block, int v) {
  const Q6KCodeBits at = q6k_code_bits(v);
  return static_cast<uint8_t>(((block[at.ql] >> at.nibble_shift) & 15) | ((block[at.qh] >> at.high_shift) & 3) << 4);
}

// Sets value v's code in a block whose ql and qh start zeroed.
void set_q6k_code(uint8_t* block, int v, uint8_t code) {
  const Q6KCodeBits at = q6k_code_bits(v);
  block[at.ql] = static_cast<uint8_t>(block[at.ql] | (code & 15) << at.nibble_shift);
  block[at.qh] = static_cast<uint8_t>(block[at.qh] | (code >> 4) << at.high_shift);
}

// The three interleaved bytes that hold 4 codes' bits, of values 16j + b + 4i (i = 0-3) in a sub-block j: the
// low 4 bits of i = 0, 1 (nibbles of the first vector's byte), of i = 2, 3 (second vector), top 2 bits of all four.
struct Q6KLaneByte {
  uint8_t low01, low23, high;
};

Q6KLaneByte q6k_lane_byte(const uint8_t (&c)[4]) {
  return {static_cast<uint8_t>((c[0] & 15) | (c[1] & 15) << 4), static_cast<uint8_t>((c[2] & 15) | (c[3] & 15) << 4),
          static_cast<uint8_t>(c[0] >> 4 | (c[1] >> 4) << 2 | (c[2] >> 4) << 4 | (c[3] >> 4) << 6)};
}

// Byte b of row r's lane of sub-block j, at each of its three vectors.
size_t q6k_code_byte(int j, size_t r, int b) {
  return 144 + 96 * static_cast<size_t>(j) + 4 * r + static_cast<size_t>(b);
}

void interleave_q6k_block(const uint8_t* const (&blocks)[kInterleavedRows], uint8_t* out) {
  for (size_t r = 0; r < kInterleavedRows; ++r) {
    const uint8_t* w = blocks[r];
    std::memcpy(out + 2 * r, w + 208, 2);
    for (int j = 0; j < 16; ++j) {
      out[16 + interleaved_scale_slot(j, static_cast<int>(r))] = w[192 + j];
      for (int b = 0; b < 4; ++b) {
        const uint8_t codes[4] = {q6k_code(w, 16 * j + b), q6k_code(w, 16 * j + 4 + b), q6k_code(w, 16 * j + 8 + b),
                                  q6k_code(w, 16 * j + 12 + b)};
        const Q6KLaneByte lane = q6k_lane_byte(codes);
        const size_t at = q6k_code_byte(j, r, b);
        out[at] = lane.low01;
        out[at + 32] = lane.low23;
        out[at + 64] = lane.high;
      }
    }
  }
}

// ---- Q2_K, Q3_K and IQ4_XS: codes and scales moved one at a time -----------------------------------------
// Their interleaved blocks are written by taking each value's code and each sub-block's scale from the file block
// and putting it at its place in the group (and back), through a bit-field accessor per place.

// `bits` bits at bit `shift` of byte p[at].
uint8_t get_bits(const uint8_t* p, size_t at, int shift, int bits) {
  return static_cast<uint8_t>((p[at] >> shift) & ((1 << bits) - 1));
}
// The same field set in a byte whose field starts zeroed.
void put_bits(uint8_t* p, size_t at, int shift, uint8_t value) { p[at] = static_cast<uint8_t>(p[at] | value << shift); }

// Q2_K (84 bytes: scales[16], qs[64], f16 d, f16 dmin) and Q3_K's low 2 bits (qs[64] at 32): value v's 2 bits at
// bit 2k of qs[32h + l], h = v / 128, k = v % 128 / 32, l = v % 32.
size_t q2k_code_byte(int v) { return static_cast<size_t>(32 * (v / 128) + v % 32); }
int q2k_code_shift(int v) { return 2 * (v % 128 / 32); }

// The interleaved places of a 16-value sub-block format's 2-bit codes: value 16j + 4i + b of row r at bits 2i of
// byte `codes + 32j + 4r + b`.
size_t lane_2bit_byte(size_t codes, int v, size_t r) {
  return codes + 32 * static_cast<size_t>(v / 16) + 4 * r + static_cast<size_t>(v % 4);
}
int lane_2bit_shift(int v) { return 2 * (v % 16 / 4); }

// Q3_K's third code bit: file bit 4h + k of hmask[l] (h, k, l as for the low bits); interleaved bit
// 4 (j % 2) + i of byte kQ3KInterleavedHighBits + 32 (j / 2) + 4r + b.
int q3k_high_shift(int v) { return 4 * (v / 128) + v % 128 / 32; }
size_t q3k_lane_high_byte(int v, size_t r) {
  return kQ3KInterleavedHighBits + 32 * static_cast<size_t>(v / 32) + 4 * r + static_cast<size_t>(v % 4);
}
int q3k_lane_high_shift(int v) { return 4 * (v / 16 % 2) + v % 16 / 4; }

// Q3_K's 6-bit scale j (biased by 32) in the file: the low 4 bits in nibble j / 8 of scales[j % 8], the top 2
// at bits 2 (j / 4) of scales[8 + j % 4] (scales at byte 96).
uint8_t q3k_file_scale(const uint8_t* w, int j) {
  return static_cast<uint8_t>(get_bits(w, 96 + static_cast<size_t>(j % 8), 4 * (j / 8), 4) |
                              get_bits(w, 96 + 8 + static_cast<size_t>(j % 4), 2 * (j / 4), 2) << 4);
}
void set_q3k_file_scale(uint8_t* w, int j, uint8_t s) {
  put_bits(w, 96 + static_cast<size_t>(j % 8), 4 * (j / 8), s & 15);
  put_bits(w, 96 + 8 + static_cast<size_t>(j % 4), 2 * (j / 4), s >> 4);
}

// A 6-bit scale at slot k of n_slots interleaved slots: its low 4 bits in nibble k / (n_slots / 2) of low-nibble
// byte k % (n_slots / 2), its top 2 bits at bits 2 (k / (n_slots / 4)) of top-bit byte k % (n_slots / 4).
struct SixBitSlots {
  size_t low, top;
  int n_slots;
  uint8_t get(const uint8_t* gb, int k) const {
    const int half = n_slots / 2, quarter = n_slots / 4;
    return static_cast<uint8_t>(get_bits(gb, low + static_cast<size_t>(k % half), 4 * (k / half), 4) |
                                get_bits(gb, top + static_cast<size_t>(k % quarter), 2 * (k / quarter), 2) << 4);
  }
  void put(uint8_t* gb, int k, uint8_t s) const {
    const int half = n_slots / 2, quarter = n_slots / 4;
    put_bits(gb, low + static_cast<size_t>(k % half), 4 * (k / half), s & 15);
    put_bits(gb, top + static_cast<size_t>(k % quarter), 2 * (k / quarter), s >> 4);
  }
};
constexpr SixBitSlots kQ3KSlots{kQ3KInterleavedScaleLow, kQ3KInterleavedScaleTop, 128};
constexpr SixBitSlots kIq4XsSlots{kIq4XsInterleavedScaleLow, kIq4XsInterleavedScaleTop, 64};

void interleave_q2k_block(const uint8_t* const (&blocks)[kInterleavedRows], uint8_t* out) {
  std::memset(out, 0, kQ2KInterleavedBlockBytes);
  for (size_t r = 0; r < kInterleavedRows; ++r) {
    const uint8_t* w = blocks[r];
    std::memcpy(out + 2 * r, w + 80, 2);
    std::memcpy(out + 16 + 2 * r, w + 82, 2);
    for (int j = 0; j < 16; ++j) out[32 + interleaved_scale_slot(j, static_cast<int>(r))] = w[j];
    for (int v = 0; v < 256; ++v) {
      put_bits(out, lane_2bit_byte(kQ2KInterleavedCodes, v, r), lane_2bit_shift(v),
               get_bits(w, 16 + q2k_code_byte(v), q2k_code_shift(v), 2));
    }
  }
}

void interleave_q3k_block(const uint8_t* const (&blocks)[kInterleavedRows], uint8_t* out) {
  std::memset(out, 0, kQ3KInterleavedBlockBytes);
  for (size_t r = 0; r < kInterleavedRows; ++r) {
    const uint8_t* w = blocks[r];
    std::memcpy(out + 2 * r, w + 108, 2);
    for (int j = 0; j < 16; ++j)
      kQ3KSlots.put(out, interleaved_scale_slot(j, static_cast<int>(r)), q3k_file_scale(w, j));
    for (int v = 0; v < 256; ++v) {
      put_bits(out, lane_2bit_byte(kQ3KInterleavedLowBits, v, r), lane_2bit_shift(v),
               get_bits(w, 32 + q2k_code_byte(v), q2k_code_shift(v), 2));
      put_bits(out, q3k_lane_high_byte(v, r), q3k_lane_high_shift(v),
               get_bits(w, static_cast<size_t>(v % 32), q3k_high_shift(v), 1));
    }
  }
}

// IQ4_XS (136 bytes: f16 d, u16 scales_h, scales_l[4], qs[128]): value 32j + 16n + l is nibble n of qs[16j + l];
// interleaved, value 32j + 8i + 4n + b of row r is nibble n of byte 64 + 128j + 32i + 4r + b (as Q4_K's codes).
size_t iq4xs_file_byte(int v) { return 8 + static_cast<size_t>(16 * (v / 32) + v % 16); }
int iq4xs_file_shift(int v) { return 4 * (v % 32 / 16); }
size_t iq4xs_lane_byte(int v, size_t r) {
  return kIq4XsInterleavedCodes + 128 * static_cast<size_t>(v / 32) + 32 * static_cast<size_t>(v % 32 / 8) + 4 * r +
         static_cast<size_t>(v % 4);
}
int iq4xs_lane_shift(int v) { return 4 * (v % 8 / 4); }
// The 6-bit scale of sub-block j in the file: low 4 bits in nibble j % 2 of scales_l[j / 2], top 2 at bits 2j of
// scales_h.
uint8_t iq4xs_file_scale(const uint8_t* w, int j) {
  return static_cast<uint8_t>(get_bits(w, 4 + static_cast<size_t>(j / 2), 4 * (j % 2), 4) |
                              get_bits(w, 2 + static_cast<size_t>(j / 4), 2 * (j % 4), 2) << 4);
}

void interleave_iq4xs_block(const uint8_t* const (&blocks)[kInterleavedRows], uint8_t* out) {
  std::memset(out, 0, kIq4XsInterleavedBlockBytes);
  for (size_t r = 0; r < kInterleavedRows; ++r) {
    const uint8_t* w = blocks[r];
    std::memcpy(out + 2 * r, w, 2);
    for (int j = 0; j < 8; ++j)
      kIq4XsSlots.put(out, interleaved_scale_slot(j, static_cast<int>(r)), iq4xs_file_scale(w, j));
    for (int v = 0; v < 256; ++v) {
      put_bits(out, iq4xs_lane_byte(v, r), iq4xs_lane_shift(v),
               get_bits(w, iq4xs_file_byte(v), iq4xs_file_shift(v), 4));
    }
  }
}

// ---- Q5_K and Q5_0: a 4-bit layout and the fifth bits -------------------------------------------------------

// Where the fifth bit of value v (0-31) of a 32-value unit sits among that unit's 32 interleaved fifth-bit bytes at
// `at`: byte 4r + v % 4, bit 4 (v % 8 / 4) + v / 8.
size_t fifth_bit_byte(size_t at, int v, size_t r) { return at + 4 * r + static_cast<size_t>(v % 4); }
int fifth_bit_shift(int v) { return 4 * (v % 8 / 4) + v / 8; }

// Q5_K (176 bytes: f16 d, f16 dmin, scales[12], qh[32], qs[128]) is Q4_K (144 bytes: the same without qh) plus the
// fifth bit of value v at bit v / 32 of qh[v % 32].
void q4k_part_of_q5k(const uint8_t* q5k, uint8_t* q4k) {
  std::memcpy(q4k, q5k, 16);
  std::memcpy(q4k + 16, q5k + 48, 128);
}

void interleave_q5k_block(const uint8_t* const (&blocks)[kInterleavedRows], uint8_t* out) {
  uint8_t q4k[kInterleavedRows][144];
  const uint8_t* parts[kInterleavedRows];
  for (size_t r = 0; r < kInterleavedRows; ++r) {
    q4k_part_of_q5k(blocks[r], q4k[r]);
    parts[r] = q4k[r];
  }
  interleave_q4k_block(parts, out);
  std::memset(out + kQ5KInterleavedHighBits, 0, kQ5KInterleavedBlockBytes - kQ5KInterleavedHighBits);
  for (size_t r = 0; r < kInterleavedRows; ++r) {
    for (int v = 0; v < 256; ++v) {
      put_bits(out, fifth_bit_byte(kQ5KInterleavedHighBits + 32 * static_cast<size_t>(v / 32), v % 32, r),
               fifth_bit_shift(v % 32), get_bits(blocks[r], 16 + static_cast<size_t>(v % 32), v / 32, 1));
    }
  }
}

// Q5_0 (22 bytes: f16 d, qh[4], qs[16]): Q4_0's codes at 6 and the fifth bit of value v at bit v of qh.
void interleave_q5_0_block(const uint8_t* const (&blocks)[kInterleavedRows], uint8_t* out) {
  std::memset(out + kQ5_0InterleavedHighBits, 0, kQ5_0InterleavedCodes - kQ5_0InterleavedHighBits);
  for (size_t r = 0; r < kInterleavedRows; ++r) {
    const uint8_t* w = blocks[r];
    std::memcpy(out + 2 * r, w, 2);
    for (int i = 0; i < 4; ++i) {
      store_u32(out + kQ5_0InterleavedCodes + 32 * i + 4 * r, lane_codes(w + 6 + 8 * (i % 2), i >= 2));
    }
    for (int v = 0; v < 32; ++v) {
      put_bits(out, fifth_bit_byte(kQ5_0InterleavedHighBits, v, r), fifth_bit_shift(v),
               get_bits(w, 2 + static_cast<size_t>(v / 8), v % 8, 1));
    }
  }
}

// ---- MXFP4: Q4_0's codes under one exponent byte per row -----------------------------------------------------

// MXFP4 (17 bytes: E8M0 e, qs[16]): its 4-bit codebook indices sit in qs as Q4_0's codes do, so they move as those.
void interleave_mxfp4_block(const uint8_t* const (&blocks)[kInterleavedRows], uint8_t* out) {
  for (size_t r = 0; r < kInterleavedRows; ++r) {
    out[r] = blocks[r][0];
    for (int i = 0; i < 4; ++i) {
      store_u32(out + kMxfp4InterleavedCodes + 32 * i + 4 * r, lane_codes(blocks[r] + 1 + 8 * (i % 2), i >= 2));
    }
  }
}

// One format's block sizes and its two directions.
struct InterleavedFormat {
  size_t block_bytes;  // one row's block in the file
  void (*interleave)(const uint8_t* const (&blocks)[kInterleavedRows], uint8_t* out);
  void (*block_of_lane)(const uint8_t* group_block, size_t lane, uint8_t* block);
};

const InterleavedFormat* interleaved_format(GgmlType type) {
  static constexpr InterleavedFormat kQ4K{144, interleave_q4k_block, q4k_block_of_lane};
  static constexpr InterleavedFormat kQ4_0{18, interleave_q4_0_block, q4_0_block_of_lane};
  static constexpr InterleavedFormat kQ6K{210, interleave_q6k_block, q6k_block_of_lane};
  static constexpr InterleavedFormat kQ8_0{34, interleave_q8_0_block, q8_0_block_of_lane};
  static constexpr InterleavedFormat kQ2K{84, interleave_q2k_block, q2k_block_of_lane};
  static constexpr InterleavedFormat kQ3K{110, interleave_q3k_block, q3k_block_of_lane};
  static constexpr InterleavedFormat kIq4Xs{136, interleave_iq4xs_block, iq4xs_block_of_lane};
  static constexpr InterleavedFormat kQ5K{176, interleave_q5k_block, q5k_block_of_lane};
  static constexpr InterleavedFormat kQ5_0{22, interleave_q5_0_block, q5_0_block_of_lane};
  static constexpr InterleavedFormat kMxfp4{17, interleave_mxfp4_block, mxfp4_block_of_lane};
  if (type == GgmlType::Q4_K) return &kQ4K;
  if (type == GgmlType::Q6_K) return &kQ6K;
  if (type == GgmlType::Q8_0) return &kQ8_0;
  if (type == GgmlType::Q4_0) return &kQ4_0;
  if (type == GgmlType::Q2_K) return &kQ2K;
  if (type == GgmlType::Q3_K) return &kQ3K;
  if (type == GgmlType::IQ4_XS) return &kIq4Xs;
  if (type == GgmlType::Q5_K) return &kQ5K;
  if (type == GgmlType::Q5_0) return &kQ5_0;
  if (type == GgmlType::MXFP4) return &kMxfp4;
  return nullptr;
}

Status check_shape(GgmlType type, size_t size, size_t n_rows, size_t n_cols) {
  if (!has_interleaved_layout(type)) return fail("{} weights have no interleaved layout", ggml_type_name(type));
  if (n_rows % kInterleavedRows != 0) {
    return fail("{} weights of {} rows cannot be interleaved: not a multiple of {} rows", ggml_type_name(type), n_rows,
                kInterleavedRows);
  }
  const auto row_bytes = ggml_row_bytes(type, n_cols);
  if (!row_bytes || *row_bytes * n_rows != size) {
    return fail("{} weights of {} rows x {} values: {} bytes is not their size", ggml_type_name(type), n_rows, n_cols,
                size);
  }
  return {};
}

}  // namespace

bool has_interleaved_layout(GgmlType type) { return interleaved_format(type) != nullptr; }

void q4k_block_of_lane(const uint8_t* group_block, size_t lane, uint8_t* block) {
  const int r = static_cast<int>(lane);
  std::memcpy(block, group_block + 2 * r, 2);
  std::memcpy(block + 2, group_block + 16 + 2 * r, 2);
  uint8_t scales[8], mins[8];
  for (int j = 0; j < 8; ++j) {
    scales[j] = q4k_six_bits(group_block, interleaved_scale_slot(j, r), 32, j < 4 ? 0 : 2);
    mins[j] = q4k_six_bits(group_block, interleaved_scale_slot(j, r), 64, j < 4 ? 4 : 6);
  }
  kquant::pack_scales_mins_6bit(scales, mins, block + 4);
  std::memset(block + 16, 0, 128);
  for (int j = 0; j < 8; ++j) {
    for (int i = 0; i < 4; ++i) {
      file_codes(u32_at(group_block + 128 + 128 * j + 32 * i + 4 * r), j % 2 == 1, q4k_quarter(block + 16, j, i));
    }
  }
}

void q4_0_block_of_lane(const uint8_t* group_block, size_t lane, uint8_t* block) {
  std::memcpy(block, group_block + 2 * lane, 2);
  std::memset(block + 2, 0, 16);
  for (int i = 0; i < 4; ++i) file_codes(u32_at(group_block + 16 + 32 * i + 4 * lane), i >= 2, block + 2 + 8 * (i % 2));
}

void q8_0_block_of_lane(const uint8_t* group_block, size_t lane, uint8_t* block) {
  std::memcpy(block, group_block + 2 * lane, 2);
  for (int i = 0; i < 8; ++i) std::memcpy(block + 2 + 4 * i, group_block + 16 + 32 * i + 4 * lane, 4);
}

void q6k_block_of_lane(const uint8_t* group_block, size_t lane, uint8_t* block) {
  std::memset(block, 0, 192);
  std::memcpy(block + 208, group_block + 2 * lane, 2);
  for (int j = 0; j < 16; ++j) {
    block[192 + j] = group_block[16 + interleaved_scale_slot(j, static_cast<int>(lane))];
    for (int b = 0; b < 4; ++b) {
      const size_t at = q6k_code_byte(j, lane, b);
      const uint8_t low01 = group_block[at], low23 = group_block[at + 32], high = group_block[at + 64];
      set_q6k_code(block, 16 * j + b, static_cast<uint8_t>((low01 & 15) | (high & 3) << 4));
      set_q6k_code(block, 16 * j + 4 + b, static_cast<uint8_t>((low01 >> 4) | ((high >> 2) & 3) << 4));
      set_q6k_code(block, 16 * j + 8 + b, static_cast<uint8_t>((low23 & 15) | ((high >> 4) & 3) << 4));
      set_q6k_code(block, 16 * j + 12 + b, static_cast<uint8_t>((low23 >> 4) | ((high >> 6) & 3) << 4));
    }
  }
}

void q2k_block_of_lane(const uint8_t* group_block, size_t lane, uint8_t* block) {
  std::memset(block, 0, 84);
  std::memcpy(block + 80, group_block + 2 * lane, 2);
  std::memcpy(block + 82, group_block + 16 + 2 * lane, 2);
  for (int j = 0; j < 16; ++j) block[j] = group_block[32 + interleaved_scale_slot(j, static_cast<int>(lane))];
  for (int v = 0; v < 256; ++v) {
    put_bits(block, 16 + q2k_code_byte(v), q2k_code_shift(v),
             get_bits(group_block, lane_2bit_byte(kQ2KInterleavedCodes, v, lane), lane_2bit_shift(v), 2));
  }
}

void q3k_block_of_lane(const uint8_t* group_block, size_t lane, uint8_t* block) {
  std::memset(block, 0, 110);
  std::memcpy(block + 108, group_block + 2 * lane, 2);
  for (int j = 0; j < 16; ++j) {
    set_q3k_file_scale(block, j, kQ3KSlots.get(group_block, interleaved_scale_slot(j, static_cast<int>(lane))));
  }
  for (int v = 0; v < 256; ++v) {
    put_bits(block, 32 + q2k_code_byte(v), q2k_code_shift(v),
             get_bits(group_block, lane_2bit_byte(kQ3KInterleavedLowBits, v, lane), lane_2bit_shift(v), 2));
    put_bits(block, static_cast<size_t>(v % 32), q3k_high_shift(v),
             get_bits(group_block, q3k_lane_high_byte(v, lane), q3k_lane_high_shift(v), 1));
  }
}

void iq4xs_block_of_lane(const uint8_t* group_block, size_t lane, uint8_t* block) {
  std::memset(block, 0, 136);
  std::memcpy(block, group_block + 2 * lane, 2);
  for (int j = 0; j < 8; ++j) {
    const uint8_t s = kIq4XsSlots.get(group_block, interleaved_scale_slot(j, static_cast<int>(lane)));
    put_bits(block, 4 + static_cast<size_t>(j / 2), 4 * (j % 2), s & 15);
    put_bits(block, 2 + static_cast<size_t>(j / 4), 2 * (j % 4), s >> 4);
  }
  for (int v = 0; v < 256; ++v) {
    put_bits(block, iq4xs_file_byte(v), iq4xs_file_shift(v),
             get_bits(group_block, iq4xs_lane_byte(v, lane), iq4xs_lane_shift(v), 4));
  }
}

void q5k_block_of_lane(const uint8_t* group_block, size_t lane, uint8_t* block) {
  uint8_t q4k[144];
  q4k_block_of_lane(group_block, lane, q4k);
  std::memcpy(block, q4k, 16);
  std::memset(block + 16, 0, 32);
  std::memcpy(block + 48, q4k + 16, 128);
  for (int v = 0; v < 256; ++v) {
    put_bits(
        block, 16 + static_cast<size_t>(v % 32), v / 32,
        get_bits(group_block, fifth_bit_byte(kQ5KInterleavedHighBits + 32 * static_cast<size_t>(v / 32), v % 32, lane),
                 fifth_bit_shift(v % 32), 1));
  }
}

void q5_0_block_of_lane(const uint8_t* group_block, size_t lane, uint8_t* block) {
  std::memcpy(block, group_block + 2 * lane, 2);
  std::memset(block + 2, 0, 20);
  for (int i = 0; i < 4; ++i) {
    file_codes(u32_at(group_block + kQ5_0InterleavedCodes + 32 * i + 4 * lane), i >= 2, block + 6 + 8 * (i % 2));
  }
  for (int v = 0; v < 32; ++v) {
    put_bits(block, 2 + static_cast<size_t>(v / 8), v % 8,
             get_bits(group_block, fifth_bit_byte(kQ5_0InterleavedHighBits, v, lane), fifth_bit_shift(v), 1));
  }
}

void mxfp4_block_of_lane(const uint8_t* group_block, size_t lane, uint8_t* block) {
  block[0] = group_block[lane];
  std::memset(block + 1, 0, 16);
  for (int i = 0; i < 4; ++i) {
    file_codes(u32_at(group_block + kMxfp4InterleavedCodes + 32 * i + 4 * lane), i >= 2, block + 1 + 8 * (i % 2));
  }
}

Status interleave_rows(GgmlType type, std::span<const std::byte> rows, size_t n_rows, size_t n_cols,
                       std::span<std::byte> out, size_t g_begin, size_t g_end) {
  if (Status s = check_shape(type, rows.size(), n_rows, n_cols); !s) return s;
  if (out.size() != rows.size()) return fail("interleave: {} bytes of output for {} bytes", out.size(), rows.size());
  if (g_begin > g_end || g_end > n_rows / kInterleavedRows) {
    return fail("interleave: groups [{}, {}) outside the {} groups", g_begin, g_end, n_rows / kInterleavedRows);
  }
  const InterleavedFormat& f = *interleaved_format(type);
  const size_t row_bytes = rows.size() / n_rows, n_blocks = row_bytes / f.block_bytes;
  const auto* in = reinterpret_cast<const uint8_t*>(rows.data());
  auto* dst = reinterpret_cast<uint8_t*>(out.data());
  for (size_t g = g_begin; g < g_end; ++g) {
    const size_t group = g * kInterleavedRows * row_bytes;
    for (size_t b = 0; b < n_blocks; ++b) {
      const uint8_t* blocks[kInterleavedRows];
      for (size_t r = 0; r < kInterleavedRows; ++r) blocks[r] = in + group + r * row_bytes + b * f.block_bytes;
      f.interleave(blocks, dst + group + b * kInterleavedRows * f.block_bytes);
    }
  }
  return {};
}

Status interleave_rows(GgmlType type, std::span<const std::byte> rows, size_t n_rows, size_t n_cols,
                       std::span<std::byte> out) {
  return interleave_rows(type, rows, n_rows, n_cols, out, 0, n_rows / kInterleavedRows);
}

namespace {

// Row `row`'s file bytes (row_bytes of them) from interleaved weights whose shape was checked.
void copy_row_of_lane(const InterleavedFormat& f, const std::byte* interleaved, size_t row_bytes, size_t row,
                      std::byte* out) {
  const auto* group =
      reinterpret_cast<const uint8_t*>(interleaved) + row / kInterleavedRows * kInterleavedRows * row_bytes;
  auto* dst = reinterpret_cast<uint8_t*>(out);
  for (size_t b = 0; b < row_bytes / f.block_bytes; ++b) {
    f.block_of_lane(group + b * kInterleavedRows * f.block_bytes, row % kInterleavedRows, dst + b * f.block_bytes);
  }
}

}  // namespace

Status row_of_interleaved(GgmlType type, std::span<const std::byte> interleaved, size_t n_rows, size_t n_cols,
                          size_t row, std::span<std::byte> out) {
  if (Status s = check_shape(type, interleaved.size(), n_rows, n_cols); !s) return s;
  if (row >= n_rows)
    return fail("row {} is outside the {} rows of interleaved {} weights", row, n_rows, ggml_type_name(type));
  const size_t row_bytes = interleaved.size() / n_rows;
  if (out.size() != row_bytes)
    return fail("interleaved row: {} bytes of output for a row of {} bytes", out.size(), row_bytes);
  copy_row_of_lane(*interleaved_format(type), interleaved.data(), row_bytes, row, out.data());
  return {};
}

Status deinterleave_rows(GgmlType type, std::span<const std::byte> interleaved, size_t n_rows, size_t n_cols,
                         std::span<std::byte> rows) {
  if (Status s = check_shape(type, interleaved.size(), n_rows, n_cols); !s) return s;
  if (rows.size() != interleaved.size()) {
    return fail("deinterleave: {} bytes of output for {} bytes", rows.size(), interleaved.size());
  }
  const InterleavedFormat& f = *interleaved_format(type);
  const size_t row_bytes = rows.size() / n_rows;
  for (size_t row = 0; row < n_rows; ++row) {
    copy_row_of_lane(f, interleaved.data(), row_bytes, row, rows.data() + row * row_bytes);
  }
  return {};
}

}  // namespace infertune
