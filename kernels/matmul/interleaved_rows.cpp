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
  if (type == GgmlType::Q4_K) return &kQ4K;
  if (type == GgmlType::Q6_K) return &kQ6K;
  if (type == GgmlType::Q8_0) return &kQ8_0;
  if (type == GgmlType::Q4_0) return &kQ4_0;
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
