#pragma once
// Weight rows interleaved in groups of 8 at load ("repacking"), for the matrix-vector kernels of a generation
// step. In the file's layout each row is its own run of blocks, so a kernel that computes 8 rows at once
// reads 8 streams, reduces each row's sums horizontally and decodes each row's block scales on its own. In
// the interleaved layout one contiguous pass feeds all 8 rows: the codes of 8 rows sit side by side, one
// 32-bit lane per row, so a vector of activations broadcast to every lane multiplies all 8 rows at once and
// each lane ends holding its row's sum; the block scales of the 8 rows are decoded with a few vector ops.
//
// The layout keeps the size and the place of every group: rows [8g, 8g + 8) occupy the same bytes
// [8g * row_bytes, (8g + 8) * row_bytes) as in the file, only reordered inside, so a row range's bytes (for
// prefetching, for the profile's GB/s) are where they were. Only exact integers move: a kernel reading it
// computes the same integer block sums and the same float operations per row, so the results are the same
// bits as from the file's layout.
//
// Q4_K, per group of 8 rows and super-block sb (1152 bytes = 8 x 144, at 1152 * sb in the group):
//   [0, 16)      d of rows 0-7 (f16)
//   [16, 32)     dmin of rows 0-7 (f16)
//   [32, 64)     scales, low 4 bits: byte k = S[k] & 15 | (S[k + 32] & 15) << 4
//   [64, 96)     mins, low 4 bits, the same with M
//   [96, 128)    the top 2 bits: byte k = S[k] >> 4 | S[k + 32] >> 4 << 2 | M[k] >> 4 << 4 | M[k + 32] >> 4 << 6
//   [128, 1152)  codes: 32 bytes for each sub-block j (0-7) and quarter i (0-3), at 128 + 128 j + 32 i; bytes
//                4r..4r+3 are row r's: byte b holds value 32j + 8i + b in its low nibble, 32j + 8i + 4 + b in
//                its high nibble
// where S[k] / M[k] is the 6-bit scale / min of sub-block j of row r at k = interleaved_scale_slot(j, r).
//
// Q4_0, per group of 8 rows and block b (144 bytes = 8 x 18, at 144 * b in the group):
//   [0, 16)      d of rows 0-7 (f16)
//   [16, 144)    codes: 32 bytes for each quarter i (0-3), at 16 + 32 i; bytes 4r..4r+3 are row r's: byte b
//                holds value 8i + b in its low nibble, 8i + 4 + b in its high nibble
//
// The 16-value sub-block formats keep 2-bit codes one vector per sub-block j (32 bytes at `codes` + 32 j): bytes
// 4r..4r+3 are row r's, byte b holds value 16j + 4i + b at bits 2i (i = 0-3). Scales sit at
// k = interleaved_scale_slot(j, r); 6-bit ones are split into low nibbles (slots k and k + n/2 in one byte, the
// second in the high nibble) and top bits (slots k, k + n/4, k + n/2, k + 3n/4 at bits 0, 2, 4, 6 of one byte).
//
// Q2_K, per group of 8 rows and super-block (672 bytes = 8 x 84):
//   [0, 16) d, [16, 32) dmin of rows 0-7 (f16); [32, 160) the file's scale bytes (low nibble scale, high nibble
//   min) at their slots; [160, 672) the codes
// Q3_K (880 bytes = 8 x 110):
//   [0, 16) d; [16, 80) low nibbles and [80, 112) top bits of the 128 6-bit scales (biased by 32); [112, 624)
//   the codes' low 2 bits; [624, 880) their third bits: 32 bytes per sub-block pair (2p, 2p + 1), bytes 4r..4r+3
//   row r's, byte b holding value 16j + 4i + b at bit 4 (j % 2) + i
// The 5-bit formats add their fifth bits to a 4-bit layout, 32 bytes per 32 values: bytes 4r..4r+3 are row r's, byte
// b holds at bit i the fifth bit of the value in the low nibble of code byte b of quarter i, at bit 4 + i that of the
// high nibble's (values 8i + b and 8i + 4 + b of the 32).
// Q5_K (1408 bytes = 8 x 176): Q4_K's layout in [0, 1152), then the fifth bits of sub-block j at 1152 + 32 j.
// Q5_0 (176 bytes = 8 x 22): [0, 16) d; [16, 48) the fifth bits; [48, 176) the codes as Q4_0's.
//
// MXFP4 (136 bytes = 8 x 17): [0, 8) the E8M0 exponents of rows 0-7; [8, 136) the 4-bit codebook indices, placed
// as Q4_0's codes
//
// IQ4_XS (1088 bytes = 8 x 136):
//   [0, 16) d; [16, 48) low nibbles and [48, 64) top bits of the 64 6-bit scales (biased by 32); [64, 1088) the
//   4-bit codebook indices, placed as Q4_K's codes
#include <cstddef>
#include <cstdint>
#include <span>

#include "kernels/ggml_type.h"
#include "kernels/result.h"

namespace infertune {

enum class WeightLayout : uint8_t {
  rows,          // as stored in GGUF: row after row
  interleaved8,  // groups of 8 rows interleaved (the format's layout above)
};

inline constexpr size_t kInterleavedRows = 8;
inline constexpr size_t kQ4KInterleavedBlockBytes = 8 * 144;
inline constexpr size_t kQ4_0InterleavedBlockBytes = 8 * 18;
inline constexpr size_t kQ6KInterleavedBlockBytes = 8 * 210;
inline constexpr size_t kQ8_0InterleavedBlockBytes = 8 * 34;
inline constexpr size_t kQ2KInterleavedBlockBytes = 8 * 84;
inline constexpr size_t kQ3KInterleavedBlockBytes = 8 * 110;
inline constexpr size_t kIq4XsInterleavedBlockBytes = 8 * 136;
inline constexpr size_t kQ5KInterleavedBlockBytes = 8 * 176;
inline constexpr size_t kQ5_0InterleavedBlockBytes = 8 * 22;
inline constexpr size_t kMxfp4InterleavedBlockBytes = 8 * 17;
// Byte offsets inside the interleaved blocks of Q2_K, Q3_K, IQ4_XS, Q5_K, Q5_0 and MXFP4 (the layouts above).
inline constexpr size_t kQ2KInterleavedCodes = 160;
inline constexpr size_t kQ3KInterleavedScaleLow = 16, kQ3KInterleavedScaleTop = 80, kQ3KInterleavedLowBits = 112,
                        kQ3KInterleavedHighBits = 624;
inline constexpr size_t kIq4XsInterleavedScaleLow = 16, kIq4XsInterleavedScaleTop = 48, kIq4XsInterleavedCodes = 64;
inline constexpr size_t kQ5KInterleavedHighBits = 1152;
inline constexpr size_t kQ5_0InterleavedHighBits = 16, kQ5_0InterleavedCodes = 48;
inline constexpr size_t kMxfp4InterleavedCodes = 8;

// Whether weights of `type` have an interleaved layout.
bool has_interleaved_layout(GgmlType type);

// The slot of sub-block j's scale of row r (0-7) among an interleaved super-block's scales (Q4_K: j 0-7, 64
// slots; Q6_K: j 0-15, 128): sub-blocks 4v..4v+3 fill 32 bytes, rows 0-3 of them bytes 0-15 and rows 4-7 bytes
// 16-31 (the two 128-bit lanes of a vector), sub-block j's 4 rows at 4 (j % 4).
constexpr int interleaved_scale_slot(int j, int r) { return 32 * (j / 4) + 16 * (r / 4) + 4 * (j % 4) + r % 4; }

// Writes n_rows rows of n_cols values of `type` from the file's layout (`rows`) to the interleaved one (`out`,
// the same size). Rows are taken 8 at a time: n_rows must be a multiple of 8. Groups [g_begin, g_end) only
// (of n_rows / 8), so that callers can split the work between threads.
Status interleave_rows(GgmlType type, std::span<const std::byte> rows, size_t n_rows, size_t n_cols,
                       std::span<std::byte> out, size_t g_begin, size_t g_end);
Status interleave_rows(GgmlType type, std::span<const std::byte> rows, size_t n_rows, size_t n_cols,
                       std::span<std::byte> out);

// Row `lane` (0-7) of one interleaved block of 8 rows, as the bytes of its block in the file (Q4_K: 144,
// Q4_0: 18, Q6_K: 210, Q8_0: 34, MXFP4: 17).
void q4k_block_of_lane(const uint8_t* group_block, size_t lane, uint8_t* block);
void q4_0_block_of_lane(const uint8_t* group_block, size_t lane, uint8_t* block);
void q6k_block_of_lane(const uint8_t* group_block, size_t lane, uint8_t* block);
void q8_0_block_of_lane(const uint8_t* group_block, size_t lane, uint8_t* block);
void q2k_block_of_lane(const uint8_t* group_block, size_t lane, uint8_t* block);
void q3k_block_of_lane(const uint8_t* group_block, size_t lane, uint8_t* block);
void iq4xs_block_of_lane(const uint8_t* group_block, size_t lane, uint8_t* block);
void q5k_block_of_lane(const uint8_t* group_block, size_t lane, uint8_t* block);
void q5_0_block_of_lane(const uint8_t* group_block, size_t lane, uint8_t* block);
void mxfp4_block_of_lane(const uint8_t* group_block, size_t lane, uint8_t* block);

// Row `row` in the file's layout (out: its row bytes) from interleaved weights of n_rows x n_cols: what the
// embedding lookup reads when a tied output projection was repacked.
Status row_of_interleaved(GgmlType type, std::span<const std::byte> interleaved, size_t n_rows, size_t n_cols,
                          size_t row, std::span<std::byte> out);

// The file's layout again, from the interleaved one (the inverse of interleave_rows).
Status deinterleave_rows(GgmlType type, std::span<const std::byte> interleaved, size_t n_rows, size_t n_cols,
                         std::span<std::byte> rows);

}  // namespace infertune
