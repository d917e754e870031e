// The fast matrix-vector kernels' chunk decoders (kernels/cuda/matvec_fast_decode.h), run on the host,
// against decode_piece bit for bit: every chunk of encoded rows and of arbitrary bytes, with the blocks
// placed at every alignment the kernels meet (16 bytes for the types read as uint4; both halves of a word
// for the 2-byte-aligned types). The device compiles the same code, so these pin its arithmetic without a
// GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/cuda/block_decode.h"
#include "kernels/cuda/matvec_fast_decode.h"
#include "kernels/ggml_type.h"
#include "kernels/quant.h"

namespace infertune {
namespace {

using cuda::BlockType;

uint32_t bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

bool same(float a, float b, bool any_nan_equal) {
  if (any_nan_equal && std::isnan(a) && std::isnan(b)) return true;
  return bits(a) == bits(b);
}

// Decodes every chunk of every block of `row` (n_values values) placed at byte offset `offset` of a
// 16-byte-aligned buffer, and compares each value with decode_piece's value of the same column.
template <BlockType T>
void expect_chunks_match(const std::vector<std::byte>& row, int64_t n_values, size_t offset, bool any_nan_equal) {
  using D = cuda::FastDecoder<T>;
  ASSERT_EQ(offset % D::kAlignment, 0u);
  alignas(16) static uint8_t buffer[1 << 16];
  ASSERT_LE(offset + row.size(), sizeof buffer);
  std::memcpy(buffer + offset, row.data(), row.size());
  const uint8_t* start = buffer + offset;

  std::vector<float> want(n_values);
  for (int64_t p = 0; p < n_values / 32; ++p) cuda::decode_piece<T>(start, p, &want[32 * p]);

  int mismatches = 0;
  std::vector<bool> seen(n_values, false);
  for (int64_t block = 0; block < n_values / D::kBlockValues; ++block) {
    for (int chunk = 0; chunk < D::kChunks; ++chunk) {
      float got[D::kValues];
      D::decode(start + block * D::kBlockBytes, chunk, got);
      for (int i = 0; i < D::kValues; ++i) {
        const int run = i / (D::kValues / D::kRuns), within = i % (D::kValues / D::kRuns);
        const int64_t column = block * D::kBlockValues + D::run_column(chunk, run) + within;
        ASSERT_LT(column, n_values);
        EXPECT_FALSE(seen[column]) << "column " << column << " decoded twice";
        seen[column] = true;
        if (!same(got[i], want[column], any_nan_equal) && mismatches++ < 5) {
          ADD_FAILURE() << "offset " << offset << " block " << block << " chunk " << chunk << " value " << i
                        << " (column " << column << "): decode_piece " << want[column] << " (0x" << std::hex
                        << bits(want[column]) << "), chunk decoder " << got[i] << " (0x" << bits(got[i]) << std::dec
                        << ")";
        }
      }
    }
  }
  for (int64_t c = 0; c < n_values; ++c) EXPECT_TRUE(seen[c]) << "column " << c << " never decoded";
}

// Alignments to test: 0 and 16 for the uint4 types; every even offset within 16 bytes otherwise.
template <BlockType T>
std::vector<size_t> offsets() {
  if (cuda::FastDecoder<T>::kAlignment == 16) return {0, 16, 48};
  return {0, 2, 4, 6, 8, 10, 12, 14};
}

std::vector<std::vector<float>> input_rows(int64_t n) {
  std::mt19937 rng(424242);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<std::vector<float>> rows;
  for (float scale : {1.0f, 1e-3f, 300.0f}) {
    std::vector<float> row(n);
    for (float& v : row) v = scale * normal(rng);
    rows.push_back(row);
  }
  std::vector<float> positive(n);  // one-signed: the min/offset paths
  for (float& v : positive) v = 4.0f + std::fabs(normal(rng));
  rows.push_back(positive);
  std::vector<float> sparse(n, 0.0f);
  for (int64_t i = 7; i < n; i += 29) sparse[i] = normal(rng);
  rows.push_back(sparse);
  return rows;
}

template <BlockType T>
void check_type() {
  const auto type = static_cast<GgmlType>(static_cast<uint32_t>(T));
  constexpr int64_t kValues = 1024;  // 4 super-blocks, 32 small blocks
  const size_t n_bytes = *ggml_row_bytes(type, kValues);
  for (const std::vector<float>& x : input_rows(kValues)) {
    std::vector<std::byte> row(n_bytes);
    ASSERT_TRUE(quantize_row(type, x, row).ok());
    for (size_t offset : offsets<T>()) expect_chunks_match<T>(row, kValues, offset, false);
  }
  std::mt19937 rng(99 + static_cast<uint32_t>(T));  // arbitrary bytes: NaN, inf, subnormal scales, any code
  std::uniform_int_distribution<int> byte(0, 255);
  for (int trial = 0; trial < 16; ++trial) {
    std::vector<std::byte> row(n_bytes);
    for (std::byte& b : row) b = static_cast<std::byte>(byte(rng));
    for (size_t offset : offsets<T>()) expect_chunks_match<T>(row, kValues, offset, true);
  }
}

TEST(CudaMatvecFastDecode, Q4_KChunksMatchDecodePiece) { check_type<BlockType::Q4_K>(); }
TEST(CudaMatvecFastDecode, Q5_KChunksMatchDecodePiece) { check_type<BlockType::Q5_K>(); }
TEST(CudaMatvecFastDecode, Q6_KChunksMatchDecodePiece) { check_type<BlockType::Q6_K>(); }
TEST(CudaMatvecFastDecode, Q4_0ChunksMatchDecodePiece) { check_type<BlockType::Q4_0>(); }
TEST(CudaMatvecFastDecode, Q8_0ChunksMatchDecodePiece) { check_type<BlockType::Q8_0>(); }
TEST(CudaMatvecFastDecode, F16ChunksMatchDecodePiece) { check_type<BlockType::F16>(); }

// Every 16-bit pattern through the F16 chunk decoder (the host conversion; the device's differs only in
// NaN payloads).
TEST(CudaMatvecFastDecode, EveryF16PatternMatchesDecodePiece) {
  std::vector<std::byte> row(2 * 65536);
  for (uint32_t h = 0; h < 65536; ++h) {
    row[2 * h] = static_cast<std::byte>(h & 0xFF);
    row[2 * h + 1] = static_cast<std::byte>(h >> 8);
  }
  for (size_t start = 0; start < row.size(); start += 32768) {  // in slices that fit the aligned buffer
    const std::vector<std::byte> slice(row.begin() + start, row.begin() + start + 32768);
    expect_chunks_match<BlockType::F16>(slice, 16384, 16, false);
  }
}

TEST(CudaMatvecFastDecode, TheFastTypesAreTheOnesWithDecoders) {
  for (uint32_t id = 0; id < 64; ++id) {
    const bool fast = id == 1 || id == 2 || id == 8 || id == 12 || id == 13 || id == 14;
    EXPECT_EQ(cuda::fast_decoder_exists(id), fast) << "type id " << id;
  }
}

}  // namespace
}  // namespace infertune
