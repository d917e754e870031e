// The MXFP4 codec (kernels/quant/mxfp4.cpp) against values worked out by hand from the format's definition
// (OCP MX FP4 as ggml stores it: value = 2^(e - 128) * {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, ..., -12}[q]):
//  - decoding hand-built blocks is exact, including the subnormal scales e = 0, 1, the top exponents where
//    large codes overflow to inf, and an all-zero block;
//  - encoding crafted blocks gives the bytes ggml's quantize_row_mxfp4_ref gives (the exponent from the
//    rounded log2f of the block's largest magnitude, nearest code with the first one winning ties, clipping
//    beyond 12 d, NaN / inf handling); tests/kernels/weighted_quant_crosscheck.py checks random rows
//    against ggml itself. The round-trip error bound is in quant_basic_property_test.cpp.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <vector>

#include "kernels/ggml_type.h"
#include "kernels/quant.h"
#include "kernels/quant/blocks_basic.h"

namespace infertune {
namespace {

using basic_quant::BlockMxfp4;
using basic_quant::kBlock;

constexpr float kDoubledFp4[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

// A block with exponent e whose value j has code codes[j].
BlockMxfp4 make_block(uint8_t e, const int (&codes)[kBlock]) {
  BlockMxfp4 b{};
  b.e = e;
  for (int j = 0; j < kBlock / 2; ++j) b.qs[j] = static_cast<uint8_t>(codes[j] | (codes[j + kBlock / 2] << 4));
  return b;
}

std::vector<float> decode(const BlockMxfp4& block) {
  std::vector<std::byte> bytes(sizeof block);
  std::memcpy(bytes.data(), &block, sizeof block);
  std::vector<float> out(kBlock, -999.0f);
  EXPECT_TRUE(dequantize_row(GgmlType::MXFP4, bytes, out).ok());
  return out;
}

BlockMxfp4 encode(const std::vector<float>& x) {
  std::vector<std::byte> bytes(sizeof(BlockMxfp4));
  EXPECT_TRUE(quantize_row(GgmlType::MXFP4, x, bytes).ok());
  BlockMxfp4 b{};
  std::memcpy(&b, bytes.data(), sizeof b);
  return b;
}

// The 32 codes of a block, in value order.
std::vector<int> codes_of(const BlockMxfp4& b) {
  std::vector<int> codes(kBlock);
  for (int j = 0; j < kBlock / 2; ++j) {
    codes[j] = b.qs[j] & 0xF;
    codes[j + kBlock / 2] = b.qs[j] >> 4;
  }
  return codes;
}

// A block of zeros with `head` at its start.
std::vector<float> block_with(std::initializer_list<float> head) {
  std::vector<float> x(kBlock, 0.0f);
  std::copy(head.begin(), head.end(), x.begin());
  return x;
}

// Every code once in the low nibbles, every code in reverse in the high ones.
constexpr int kAllCodes[kBlock] = {0,  1,  2,  3,  4,  5,  6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
                                   15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5,  4,  3,  2,  1,  0};

TEST(Mxfp4Scale, IsTwoToTheExponentMinus128Exactly) {
  EXPECT_EQ(std::bit_cast<uint32_t>(basic_quant::mxfp4_scale(0)), 0x00200000u);  // 2^-128, subnormal
  EXPECT_EQ(std::bit_cast<uint32_t>(basic_quant::mxfp4_scale(1)), 0x00400000u);  // 2^-127, subnormal
  EXPECT_EQ(basic_quant::mxfp4_scale(2), std::numeric_limits<float>::min());     // 2^-126
  EXPECT_EQ(basic_quant::mxfp4_scale(127), 0.5f);
  EXPECT_EQ(basic_quant::mxfp4_scale(128), 1.0f);
  EXPECT_EQ(basic_quant::mxfp4_scale(140), 4096.0f);
  EXPECT_EQ(std::bit_cast<uint32_t>(basic_quant::mxfp4_scale(255)), 0x7f000000u);  // 2^127, as ggml reads E8M0's NaN
  for (int e = 0; e < 256; ++e) {
    EXPECT_EQ(basic_quant::mxfp4_scale(static_cast<uint8_t>(e)), std::ldexp(1.0f, e - 128)) << e;
  }
}

TEST(Mxfp4Decode, UnitScaleGivesTheCodebook) {
  const auto y = decode(make_block(128, kAllCodes));
  for (int j = 0; j < kBlock; ++j) EXPECT_EQ(y[j], kDoubledFp4[kAllCodes[j]]) << j;
  EXPECT_FALSE(std::signbit(y[8])) << "code 8 is a plain zero";
}

TEST(Mxfp4Decode, ExponentsAcrossTheRange) {
  for (int e : {0, 1, 2, 3, 100, 127, 129, 200, 250}) {
    const auto y = decode(make_block(static_cast<uint8_t>(e), kAllCodes));
    for (int j = 0; j < kBlock; ++j) {
      // ldexp of a small integer is exact, subnormal results included (12 * 2^-128 = 3 * 2^-126).
      EXPECT_EQ(y[j], std::ldexp(kDoubledFp4[kAllCodes[j]], e - 128)) << "e " << e << " value " << j;
    }
  }
  const auto tiny = decode(make_block(0, kAllCodes));
  EXPECT_EQ(std::bit_cast<uint32_t>(tiny[1]), 0x00200000u);   // 1 * 2^-128
  EXPECT_EQ(std::bit_cast<uint32_t>(tiny[3]), 0x00600000u);   // 3 * 2^-128
  EXPECT_EQ(std::bit_cast<uint32_t>(tiny[7]), 0x01400000u);   // 12 * 2^-128 = 1.5 * 2^-125, a normal float
  EXPECT_EQ(std::bit_cast<uint32_t>(tiny[15]), 0x81400000u);  // -12 * 2^-128
}

TEST(Mxfp4Decode, TopExponentsOverflowTheLargeCodes) {
  const auto y254 = decode(make_block(254, kAllCodes));  // d = 2^126
  EXPECT_EQ(y254[3], std::ldexp(3.0f, 126));
  EXPECT_EQ(y254[4], std::numeric_limits<float>::infinity());  // 4 * 2^126 = 2^128
  EXPECT_EQ(y254[15], -std::numeric_limits<float>::infinity());
  const auto y255 = decode(make_block(255, kAllCodes));  // d = 2^127
  EXPECT_EQ(y255[1], std::ldexp(1.0f, 127));
  EXPECT_EQ(y255[2], std::numeric_limits<float>::infinity());
  for (float v : y255) EXPECT_FALSE(std::isnan(v));
}

TEST(Mxfp4Decode, ZeroBlockIsPositiveZeros) {
  const int zeros[kBlock] = {};
  for (float v : decode(make_block(0, zeros))) {
    EXPECT_EQ(std::bit_cast<uint32_t>(v), 0u);
  }
  const int minus_zeros[kBlock] = {8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8,
                                   8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8};
  for (float v : decode(make_block(200, minus_zeros))) EXPECT_EQ(std::bit_cast<uint32_t>(v), 0u);
}

TEST(Mxfp4Encode, UnitScaleTiesAndClipping) {
  // amax 15.9: floor(log2) = 3, e = 3 - 2 + 127 = 128, d = 1. Ties go to the first code of the table order
  // (0..7 positive, 8..15 negative): the smaller magnitude of a positive pair, and for a negative pair the
  // one listed first (-1 before -2). -0.5 ties between +0 (code 0), -1 (code 9) and -0 (code 8): code 0.
  // Past 12 d everything clips to code 7 / 15.
  const auto x = block_with({12,
                             0.5f,
                             1.5f,
                             -0.5f,
                             -1.5f,
                             5,
                             -5,
                             7,
                             10,
                             -10,
                             14,
                             -15.9f,
                             2.5f,
                             -2.5f,
                             0,
                             -0.0f,
                             3.4f,
                             -7.1f,
                             std::numeric_limits<float>::quiet_NaN(),
                             6,
                             -6,
                             8.5f});
  const int want[kBlock] = {7, 0, 1, 0, 9, 4, 12, 5, 6, 14, 7, 15, 2, 10, 0, 0, 3, 14, 0, 5, 13, 6};
  const BlockMxfp4 b = encode(x);
  EXPECT_EQ(b.e, 128);
  const auto codes = codes_of(b);
  for (int j = 0; j < kBlock; ++j) EXPECT_EQ(codes[j], want[j]) << "value " << j << " = " << x[j];
}

TEST(Mxfp4Encode, ExponentFollowsTheLargestMagnitude) {
  // amax 1: e = 0 - 2 + 127 = 125, d = 1/8, so 1 is code 6 (8 d).
  EXPECT_EQ(encode(block_with({1.0f, 0.25f})).e, 125);
  EXPECT_EQ(codes_of(encode(block_with({1.0f, 0.25f})))[1], 2);  // 0.25 = 2 d
  // amax 0.99: floor(log2) = -1, e = 124, d = 1/16: 0.99 = 15.84 d clips to 12 d (code 7).
  const BlockMxfp4 below = encode(block_with({-0.99f}));
  EXPECT_EQ(below.e, 124);
  EXPECT_EQ(codes_of(below)[0], 15);
  // Just below 8, log2f rounds to exactly 3 (it is 3 - 8.6e-8, a third of an ulp away): e = 128 as at 8
  // itself, so the value takes code 6 (8 d); the exact binade (e = 127) would have clipped it to 12 * 0.5.
  const BlockMxfp4 rounded = encode(block_with({std::nextafter(8.0f, 0.0f)}));
  EXPECT_EQ(rounded.e, 128);
  EXPECT_EQ(codes_of(rounded)[0], 6);
  // Large magnitudes stay finite: 3e38 = 14.1 * 2^124 (e = 252), code 7.
  const BlockMxfp4 large = encode(block_with({3e38f}));
  EXPECT_EQ(large.e, 252);
  EXPECT_EQ(codes_of(large)[0], 7);
}

TEST(Mxfp4Encode, SubnormalScalesAndTheirWrap) {
  EXPECT_EQ(encode(block_with({0x1p-125f})).e, 0);  // d = 2^-128: 2^-125 = 8 d
  EXPECT_EQ(codes_of(encode(block_with({0x1p-125f})))[0], 6);
  EXPECT_EQ(encode(block_with({0x1p-124f})).e, 1);
  // Below 2^-125 ggml's exponent is negative and its byte cast keeps the low byte (x86): -1 -> 255,
  // 1e-39 (log2 -129.6) -> -5 -> 251. Such a block's d is huge, so it stores zeros.
  const BlockMxfp4 wrapped = encode(block_with({0x1p-126f}));
  EXPECT_EQ(wrapped.e, 255);
  EXPECT_EQ(codes_of(wrapped)[0], 0);
  EXPECT_EQ(encode(block_with({1e-39f})).e, 251);
}

TEST(Mxfp4Encode, ZeroNanAndInfinityBlocks) {
  const BlockMxfp4 zero = encode(std::vector<float>(kBlock, 0.0f));
  EXPECT_EQ(zero.e, 0);
  for (int c : codes_of(zero)) EXPECT_EQ(c, 0);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const BlockMxfp4 nans = encode(block_with({nan, nan, 2.0f}));  // NaN is skipped by amax and gets code 0
  EXPECT_EQ(nans.e, 126);                                        // from 2: d = 1/4, 2 = 8 d
  EXPECT_EQ(codes_of(nans)[2], 6);
  EXPECT_EQ(codes_of(nans)[0], 0);
  // An infinity gives e = 0 (ggml: the cast of an infinite exponent, on x86), and every value code 0.
  const BlockMxfp4 inf = encode(block_with({std::numeric_limits<float>::infinity(), 1.0f}));
  EXPECT_EQ(inf.e, 0);
  for (int c : codes_of(inf)) EXPECT_EQ(c, 0);
}

TEST(Mxfp4Encode, ImportanceMatrixIsIgnoredAsByGgml) {
  EXPECT_FALSE(uses_importance(GgmlType::MXFP4));
  std::vector<float> x(4 * kBlock), importance(4 * kBlock);
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = std::sin(0.37f * static_cast<float>(i)) * (1.0f + static_cast<float>(i % 7));
    importance[i] = static_cast<float>(i % 5);
  }
  std::vector<std::byte> plain(4 * sizeof(BlockMxfp4)), weighted(plain.size());
  ASSERT_TRUE(quantize_row(GgmlType::MXFP4, x, plain).ok());
  ASSERT_TRUE(quantize_row_weighted(GgmlType::MXFP4, x, importance, weighted).ok());
  EXPECT_EQ(plain, weighted);
}

TEST(Mxfp4Encode, RoundTripOfCodebookValuesIsExact) {
  // Any block whose values are codebook values times the scale its amax selects comes back unchanged.
  for (int e = 10; e < 250; e += 17) {
    std::vector<float> x(kBlock);
    for (int j = 0; j < kBlock; ++j) x[j] = std::ldexp(kDoubledFp4[kAllCodes[j]], e - 128);
    const BlockMxfp4 b = encode(x);
    EXPECT_EQ(b.e, e);
    EXPECT_EQ(decode(b), x) << "e " << e;
  }
}

}  // namespace
}  // namespace infertune
