// Weights interleaved at load (kernels/matmul/interleaved_rows.h), every type that has the layout:
//  - the layout round-trips to the file's bytes, block by block and whole matrices, and keeps each group of 8
//    rows at its place;
//  - bad shapes are errors that name the type and the sizes;
//  - every SIMD variant that reads the layout gives the same bits from it as from the file's layout, for one
//    token (the interleaved matrix-vector kernel), a few tokens (its passes of up to 4 tokens, on both sides of the
//    turn to the tiles at kInterleavedMatvecTokens), and prompt batches (the tiled kernels, which decode a row from
//    the interleaved group), with rows split between callers at boundaries inside a group of 8;
//  - the embedding lookup of an interleaved table (a repacked tied output projection) gives every row's values.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "kernels/matmul/interleaved_rows.h"
#include "kernels/matmul/matmul.h"
#include "kernels/matmul/matmul_registry.h"
#include "kernels/ops/embedding.h"
#include "kernels/quant.h"

namespace infertune {
namespace {

std::vector<float> random_values(size_t n, uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// rows x cols of `type` quantized from random values (real scales and mins, as a model file has).
std::vector<std::byte> quantized_matrix(GgmlType type, size_t rows, size_t cols, uint32_t seed) {
  const size_t row_bytes = *ggml_row_bytes(type, cols);
  std::vector<std::byte> bytes(rows * row_bytes);
  const auto values = random_values(rows * cols, seed, 1.0f);
  for (size_t r = 0; r < rows; ++r) {
    EXPECT_TRUE(quantize_row(type, std::span(values).subspan(r * cols, cols),
                             std::span(bytes).subspan(r * row_bytes, row_bytes))
                    .ok());
  }
  return bytes;
}

std::vector<std::byte> q4k_matrix(size_t rows, size_t cols, uint32_t seed) {
  return quantized_matrix(GgmlType::Q4_K, rows, cols, seed);
}

std::vector<std::byte> interleaved(const std::vector<std::byte>& rows, size_t n_rows, size_t n_cols,
                                   GgmlType type = GgmlType::Q4_K) {
  std::vector<std::byte> out(rows.size());
  const Status s = interleave_rows(type, rows, n_rows, n_cols, out);
  EXPECT_TRUE(s.ok()) << s.error().message;
  return out;
}

class InterleavedTypes : public ::testing::TestWithParam<GgmlType> {};

TEST_P(InterleavedTypes, RoundTripsToTheFileBytes) {
  // Random bytes: every bit of every field must survive, not only the values a quantizer writes.
  constexpr size_t kRows = 24, kCols = 768;
  const GgmlType type = GetParam();
  std::vector<std::byte> rows(kRows * *ggml_row_bytes(type, kCols));
  std::mt19937 rng(7);
  for (std::byte& b : rows) b = static_cast<std::byte>(rng());
  const auto packed = interleaved(rows, kRows, kCols, type);
  EXPECT_NE(packed, rows);
  std::vector<std::byte> back(rows.size());
  ASSERT_TRUE(deinterleave_rows(type, packed, kRows, kCols, back).ok());
  EXPECT_EQ(back, rows);
}

TEST_P(InterleavedTypes, EmbeddingLookupsReadEveryRowOfAnInterleavedTable) {
  constexpr size_t kRows = 24, kCols = 512;
  const GgmlType type = GetParam();
  const auto rows = quantized_matrix(type, kRows, kCols, 11);
  const auto packed = interleaved(rows, kRows, kCols, type);
  std::vector<float> want(kCols), got(kCols);
  for (size_t r = 0; r < kRows; ++r) {
    ASSERT_TRUE(embedding_row(type, rows, r, want).ok());
    const Status s = embedding_row(type, packed, r, got, WeightLayout::interleaved8);
    ASSERT_TRUE(s.ok()) << s.error().message;
    EXPECT_EQ(got, want) << "row " << r;
  }
  const Status outside = embedding_row(type, packed, kRows, got, WeightLayout::interleaved8);
  ASSERT_FALSE(outside.ok());
  EXPECT_NE(outside.error().message.find("outside"), std::string::npos) << outside.error().message;
}

TEST(InterleavedRows, EachGroupKeepsItsBytesAndEachLaneRebuildsItsBlock) {
  constexpr size_t kRows = 16, kCols = 512, kRowBytes = 2 * 144;
  const auto rows = q4k_matrix(kRows, kCols, 3);
  const auto packed = interleaved(rows, kRows, kCols);
  // Group 1 from only its own rows: the same bytes as in the whole matrix.
  std::vector<std::byte> group(8 * kRowBytes);
  ASSERT_TRUE(
      interleave_rows(GgmlType::Q4_K, std::span(rows).subspan(8 * kRowBytes, 8 * kRowBytes), 8, kCols, group).ok());
  EXPECT_EQ(0, std::memcmp(group.data(), packed.data() + 8 * kRowBytes, group.size()));
  for (size_t row = 0; row < kRows; ++row) {
    for (size_t sb = 0; sb < 2; ++sb) {
      uint8_t block[144];
      const auto* group_block = reinterpret_cast<const uint8_t*>(packed.data()) + row / 8 * 8 * kRowBytes + sb * 1152;
      q4k_block_of_lane(group_block, row % 8, block);
      EXPECT_EQ(0, std::memcmp(block, rows.data() + row * kRowBytes + sb * 144, 144)) << "row " << row << " sb " << sb;
    }
  }
}

TEST(InterleavedRows, BadShapesAreErrors) {
  const auto rows = q4k_matrix(12, 256, 1);
  std::vector<std::byte> out(rows.size());
  Status s = interleave_rows(GgmlType::Q4_K, rows, 12, 256, out);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("12 rows"), std::string::npos) << s.error().message;
  EXPECT_NE(s.error().message.find("multiple of 8"), std::string::npos) << s.error().message;

  s = interleave_rows(GgmlType::Q4_1, std::span(rows).first(8 * 160), 8, 256, out);  // a type without the layout
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("q4_1"), std::string::npos) << s.error().message;

  s = interleave_rows(GgmlType::Q4_K, std::span(rows).first(8 * 144 - 1), 8, 256, out);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("1151 bytes"), std::string::npos) << s.error().message;

  std::vector<std::byte> small(8 * 144);
  s = interleave_rows(GgmlType::Q4_K, std::span(rows).first(8 * 144), 8, 256, small, 0, 2);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("groups [0, 2)"), std::string::npos) << s.error().message;

  MatmulProblem p{GgmlType::Q4_K, std::span(rows).first(4 * 144), 4, 256};
  p.layout = WeightLayout::interleaved8;
  s = check_matmul_problem(p);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("interleaved"), std::string::npos) << s.error().message;
}

// The variants this CPU runs whose kernel of `type` reads the layout.
std::vector<std::string> interleaving_variants(GgmlType type) {
  std::vector<std::string> names;
  for (const MatmulVariant& v : compiled_matmul_variants()) {
    if (v.available && !v.available()) continue;
    for (const MatmulKernel& k : v.kernels()) {
      if (k.type == type && k.reads_interleaved) names.emplace_back(v.name);
    }
  }
  return names;
}

// y [n_tokens][n_rows] of the variant's kernel, rows cut at `cuts`.
std::vector<float> run(GgmlType type, MatmulFn fn, std::span<const std::byte> weights, WeightLayout layout,
                       size_t n_rows, size_t n_cols, const std::vector<float>& x, size_t n_tokens,
                       const std::vector<size_t>& cuts) {
  std::vector<float> y(n_tokens * n_rows, -999.0f);
  MatmulProblem p{type, weights, n_rows, n_cols, x.data(), n_tokens, y.data()};
  p.layout = layout;
  EXPECT_TRUE(check_matmul_problem(p).ok());
  size_t begin = 0;
  for (size_t cut : cuts) {
    fn(p, begin, cut);
    begin = cut;
  }
  fn(p, begin, n_rows);
  return y;
}

TEST_P(InterleavedTypes, KernelsGiveTheSameBitsAsFromTheFileLayout) {
  const GgmlType type = GetParam();
  const auto variants = interleaving_variants(type);
  if (variants.empty()) GTEST_SKIP() << "no matmul variant on this CPU reads the interleaved layout";
  // The 32-value formats: 25 blocks, an odd last one (the activation codes of a pair of blocks are interleaved, the
  // last not).
  constexpr size_t kRows = 40;
  const size_t kCols = ggml_type_traits(type).block_elements == 32 ? 800 : 768;
  const auto rows = quantized_matrix(type, kRows, kCols, 11);
  const auto packed = interleaved(rows, kRows, kCols, type);
  for (const std::string& name : variants) {
    const ScopedMatmulVariant forced(name);
    const auto kernel = matmul_registry().find(type);
    ASSERT_TRUE(kernel.ok());
    for (size_t n_tokens : {size_t{1}, size_t{2}, size_t{3}, size_t{5}, size_t{8}, size_t{17},
                            kInterleavedMatvecTokens - 1, kInterleavedMatvecTokens}) {
      auto x = random_values(n_tokens * kCols, 100 + static_cast<uint32_t>(n_tokens), 0.5f);
      for (size_t i = 0; i < x.size(); i += 97) x[i] *= 12.0f;  // outliers, as after attention
      const auto want = run(type, kernel->fn, rows, WeightLayout::rows, kRows, kCols, x, n_tokens, {});
      for (const std::vector<size_t>& cuts : {std::vector<size_t>{}, {13}, {3, 8, 21, 35}}) {
        const auto got = run(type, kernel->fn, packed, WeightLayout::interleaved8, kRows, kCols, x, n_tokens, cuts);
        ASSERT_EQ(0, std::memcmp(got.data(), want.data(), want.size() * sizeof(float)))
            << name << ", " << n_tokens << " tokens, " << cuts.size() << " cuts";
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Types, InterleavedTypes,
                         ::testing::Values(GgmlType::Q4_K, GgmlType::Q6_K, GgmlType::Q4_0, GgmlType::Q8_0,
                                           GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::IQ4_XS, GgmlType::Q5_K,
                                           GgmlType::Q5_0, GgmlType::MXFP4),
                         [](const auto& info) { return std::string(ggml_type_name(info.param)); });

TEST(InterleavedRows, Q4_0LanesRebuildTheirBlocks) {
  constexpr size_t kRows = 8, kCols = 64;
  const auto rows = quantized_matrix(GgmlType::Q4_0, kRows, kCols, 5);
  const auto packed = interleaved(rows, kRows, kCols, GgmlType::Q4_0);
  for (size_t row = 0; row < kRows; ++row) {
    for (size_t b = 0; b < 2; ++b) {
      uint8_t block[18];
      q4_0_block_of_lane(reinterpret_cast<const uint8_t*>(packed.data()) + b * 144, row, block);
      EXPECT_EQ(0, std::memcmp(block, rows.data() + row * 36 + b * 18, 18)) << "row " << row << " block " << b;
    }
  }
}

TEST(InterleavedRows, Mxfp4LargestCodesAgainstLargestActivationsSumExactly) {
  // Every value 12 (the codebook's largest, code 7 in both nibbles) at scale 2^-1, every activation 1 (q8 code 127):
  // the sums that would overflow an int16 if a block's 8 maddubs pairs were added there (8 x 2 x 24 x 127).
  constexpr size_t kRows = 8, kCols = 256, kBlocks = kCols / 32;
  std::vector<std::byte> rows(kRows * kBlocks * 17, std::byte{0x77});
  for (size_t b = 0; b < kRows * kBlocks; ++b) rows[17 * b] = std::byte{127};
  const auto packed = interleaved(rows, kRows, kCols, GgmlType::MXFP4);
  const std::vector<float> x(kCols, 1.0f);
  const auto variants = interleaving_variants(GgmlType::MXFP4);
  if (variants.empty()) GTEST_SKIP() << "no matmul variant on this CPU reads the interleaved MXFP4 layout";
  for (const std::string& name : variants) {
    const ScopedMatmulVariant forced(name);
    const auto kernel = matmul_registry().find(GgmlType::MXFP4);
    ASSERT_TRUE(kernel.ok());
    const auto want = run(GgmlType::MXFP4, kernel->fn, rows, WeightLayout::rows, kRows, kCols, x, 1, {});
    const auto got = run(GgmlType::MXFP4, kernel->fn, packed, WeightLayout::interleaved8, kRows, kCols, x, 1, {});
    for (size_t r = 0; r < kRows; ++r) {
      EXPECT_NEAR(got[r], 6.0f * kCols, 1e-3f * kCols) << name << " row " << r;  // 12 x 2^-1 x 1 per value
      EXPECT_EQ(got[r], want[r]) << name << " row " << r;
    }
  }
}

}  // namespace
}  // namespace infertune
