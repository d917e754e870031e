// Activation quantization for the integer matmul kernels (kernels/matmul/activation_quant.h,
// quantized_activations.h), against direct recomputation from the definitions:
//  - codes are round-to-nearest of x / d with d = amax / 127 per block, |code| <= 127; sums are exact;
//  - the AVX2 row quantizers give bit-identical results to the portable ones;
//  - the q8 rows are pair-interleaved; the panels hold every token's codes and per-block numbers at
//    [token / 16][item][token % 16], tokens past the end zero; token ranges quantized separately (as threads
//    do) give the same bytes as one pass;
//  - formats follow the weight types; a row length that is not whole blocks is an error.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/cpu_features.h"
#include "kernels/half.h"
#include "kernels/matmul/activation_quant.h"
#include "kernels/matmul/avx2/activation_quant_avx2.h"
#include "kernels/matmul/quantized_activations.h"

namespace infertune {
namespace {

std::vector<float> random_values(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  for (size_t i = 0; i < n; i += 37) v[i] *= 20.0f;                   // outliers
  for (size_t i = 64; i < std::min<size_t>(n, 96); ++i) v[i] = 0.0f;  // an all-zero block
  return v;
}

// The code of x in a block of largest magnitude amax, from the definition.
int expected_code(float x, float amax) {
  const float d = amax / 127.0f;
  return d == 0 ? 0 : static_cast<int>(std::nearbyint(x * (1.0f / d)));
}

TEST(ActivationQuant, Q8RowFollowsTheDefinition) {
  const size_t n = 256;
  const auto x = random_values(n, 1);
  std::vector<int8_t> codes(n);
  std::vector<float> d(n / 32), dsum(n / 32);
  quantize_row_q8(x.data(), n, codes.data(), d.data(), dsum.data());
  for (size_t b = 0; b < n / 32; ++b) {
    float amax = 0;
    for (size_t i = 32 * b; i < 32 * b + 32; ++i) amax = std::max(amax, std::fabs(x[i]));
    EXPECT_EQ(d[b], f16_to_f32(f32_to_f16(amax / 127.0f)));  // ggml's f16 block scale
    int sum = 0;
    for (size_t i = 32 * b; i < 32 * b + 32; ++i) {
      EXPECT_EQ(codes[i], expected_code(x[i], amax)) << i;
      EXPECT_LE(std::abs(codes[i]), 127);
      sum += codes[i];
    }
    // q8_1's s: the unrounded scale times the code sum, rounded to f16 (not d[b] * sum).
    EXPECT_EQ(dsum[b], f16_to_f32(f32_to_f16(amax / 127.0f * static_cast<float>(sum))));
  }
}

TEST(ActivationQuant, Q8KRowFollowsTheDefinition) {
  const size_t n = 512;
  const auto x = random_values(n, 2);
  std::vector<kquant::BlockQ8K> blocks(n / 256);
  quantize_row_q8k(x.data(), n, blocks.data());
  for (size_t b = 0; b < n / 256; ++b) {
    float amax = 0;
    for (size_t i = 256 * b; i < 256 * b + 256; ++i) amax = std::max(amax, std::fabs(x[i]));
    EXPECT_EQ(blocks[b].d, amax / 127.0f);
    for (int g = 0; g < 16; ++g) {
      int sum = 0;
      for (int i = 0; i < 16; ++i) {
        const int8_t q = blocks[b].qs[16 * g + i];
        EXPECT_EQ(q, expected_code(x[256 * b + 16 * g + i], amax));
        sum += q;
      }
      EXPECT_EQ(blocks[b].bsums[g], sum);
    }
  }
}

TEST(ActivationQuant, Avx2QuantizersAreBitIdenticalToPortableOnes) {
  if (!cpu_features().avx2) GTEST_SKIP() << "this CPU has no AVX2";
  const size_t n = 2048;
  for (uint32_t seed = 3; seed < 8; ++seed) {
    const auto x = random_values(n, seed);
    std::vector<int8_t> c1(n), c2(n);
    std::vector<float> d1(n / 32), d2(n / 32), s1(n / 32), s2(n / 32);
    quantize_row_q8_scalar(x.data(), n, c1.data(), d1.data(), s1.data());
    quantize_row_q8_avx2(x.data(), n, c2.data(), d2.data(), s2.data());
    EXPECT_EQ(c1, c2);
    EXPECT_EQ(d1, d2);
    EXPECT_EQ(s1, s2);
    std::vector<kquant::BlockQ8K> k1(n / 256), k2(n / 256);
    quantize_row_q8k_scalar(x.data(), n, k1.data());
    quantize_row_q8k_avx2(x.data(), n, k2.data());
    EXPECT_EQ(std::memcmp(k1.data(), k2.data(), k1.size() * sizeof(kquant::BlockQ8K)), 0);
  }
}

TEST(ActivationQuant, PairInterleaving) {
  std::vector<int8_t> natural(96), paired(96);
  for (size_t i = 0; i < 96; ++i) natural[i] = static_cast<int8_t>(i);
  pair_interleave_q8(natural.data(), 96, paired.data());
  for (size_t i = 0; i < 16; ++i) {
    EXPECT_EQ(paired[i], natural[i]);            // block 0, codes 0-15
    EXPECT_EQ(paired[16 + i], natural[32 + i]);  // block 1, codes 0-15
    EXPECT_EQ(paired[32 + i], natural[16 + i]);  // block 0, codes 16-31
    EXPECT_EQ(paired[48 + i], natural[48 + i]);  // block 1, codes 16-31
  }
  for (size_t i = 64; i < 96; ++i) EXPECT_EQ(paired[i], natural[i]);  // an odd last block stays in order
}

TEST(QuantizedActivationsTest, FormatsFollowTheWeightTypes) {
  EXPECT_EQ(activation_format(GgmlType::Q4_0), ActivationFormat::q8);
  EXPECT_EQ(activation_format(GgmlType::IQ4_NL), ActivationFormat::q8);
  EXPECT_EQ(activation_format(GgmlType::MXFP4), ActivationFormat::q8);  // ggml's vec_dot_type for it: q8_0
  EXPECT_EQ(activation_format(GgmlType::Q4_K), ActivationFormat::q8k);
  EXPECT_EQ(activation_format(GgmlType::IQ4_XS), ActivationFormat::q8k);
  EXPECT_EQ(activation_format(GgmlType::F16), ActivationFormat::f32);
  const std::vector<float> x(2 * 512, 1.0f);
  QuantizedActivations xq;
  const GgmlType mixed[] = {GgmlType::Q4_K, GgmlType::Q6_K, GgmlType::F32};
  ASSERT_TRUE(xq.quantize_all(x.data(), 2, 512, mixed).ok());
  EXPECT_TRUE(xq.has(ActivationFormat::q8k));
  EXPECT_FALSE(xq.has(ActivationFormat::q8));
  EXPECT_TRUE(xq.has(ActivationFormat::f32));
  const GgmlType q8_only[] = {GgmlType::Q8_0};
  ASSERT_TRUE(xq.quantize_all(x.data(), 2, 512, q8_only).ok());
  EXPECT_TRUE(xq.has(ActivationFormat::q8));
  EXPECT_FALSE(xq.has(ActivationFormat::q8k));
}

TEST(QuantizedActivationsTest, RowsThatAreNotWholeBlocksAreErrors) {
  const std::vector<float> x(3 * 96, 1.0f);
  QuantizedActivations xq;
  const GgmlType k[] = {GgmlType::Q4_K};
  const Status s = xq.quantize_all(x.data(), 3, 96, k);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("96"), std::string::npos) << s.error().message;
  const GgmlType q8[] = {GgmlType::Q8_0};
  EXPECT_TRUE(xq.quantize_all(x.data(), 3, 96, q8).ok());
  const GgmlType f[] = {GgmlType::F16};
  EXPECT_TRUE(xq.quantize_all(x.data(), 3, 7, f).ok());  // float weights need no blocks
}

// Every token's codes and floats in its panel lane, the rows as quantize_row_* makes them.
TEST(QuantizedActivationsTest, PanelsHoldEveryTokenAndZeroPadding) {
  const size_t n_cols = 512, n_tokens = 21;  // two panels, the second with 11 padding lanes
  const auto x = random_values(n_tokens * n_cols, 9);
  QuantizedActivations xq;
  const GgmlType types[] = {GgmlType::Q4_0, GgmlType::Q4_K};
  ASSERT_TRUE(xq.quantize_all(x.data(), n_tokens, n_cols, types).ok());
  ASSERT_TRUE(xq.has_panels());
  ASSERT_EQ(xq.n_panels(), 2u);
  for (size_t t = 0; t < 2 * kPanelTokens; ++t) {
    const bool real = t < n_tokens;
    const size_t lane = t % kPanelTokens;
    const ActivationPanel q8 = xq.q8_panel(t / kPanelTokens);
    const ActivationPanel q8k = xq.q8k_panel(t / kPanelTokens);
    std::vector<int8_t> natural(n_cols);
    std::vector<float> d(n_cols / 32), dsum(n_cols / 32);
    std::vector<int32_t> isum(n_cols / 32);
    std::vector<kquant::BlockQ8K> blocks(n_cols / 256);
    if (real) {
      quantize_row_q8(x.data() + t * n_cols, n_cols, natural.data(), d.data(), dsum.data(), isum.data());
      EXPECT_EQ(std::memcmp(xq.q8_isums(t), isum.data(), isum.size() * 4), 0) << t;
      quantize_row_q8k(x.data() + t * n_cols, n_cols, blocks.data());
      std::vector<int8_t> paired(n_cols);
      pair_interleave_q8(natural.data(), n_cols, paired.data());
      EXPECT_EQ(std::memcmp(xq.q8_codes(t), paired.data(), n_cols), 0) << t;
      EXPECT_EQ(std::memcmp(xq.q8k_row(t), blocks.data(), blocks.size() * sizeof(blocks[0])), 0) << t;
    }
    for (size_t i = 0; i < n_cols; ++i) {
      const int8_t want_q8 = real ? natural[i] : 0;
      const int8_t want_q8k = real ? blocks[i / 256].qs[i % 256] : 0;
      ASSERT_EQ(q8.codes[((i / 4) * kPanelTokens + lane) * 4 + i % 4], want_q8) << "t" << t << " i" << i;
      ASSERT_EQ(q8k.codes[((i / 4) * kPanelTokens + lane) * 4 + i % 4], want_q8k) << "t" << t << " i" << i;
    }
    for (size_t b = 0; b < n_cols / 32; ++b) {
      EXPECT_EQ(q8.scales[b * kPanelTokens + lane], real ? d[b] : 0.0f);
      EXPECT_EQ(q8.sums[b * kPanelTokens + lane], real ? dsum[b] : 0.0f);
      EXPECT_EQ(q8.isums[b * kPanelTokens + lane], real ? isum[b] : 0);
      int sum = 0;
      for (size_t i = 32 * b; i < 32 * b + 32; ++i) sum += natural[i];
      EXPECT_EQ(isum[b], real ? sum : 0);
    }
    for (size_t b = 0; b < n_cols / 256; ++b) {
      EXPECT_EQ(q8k.scales[b * kPanelTokens + lane], real ? blocks[b].d : 0.0f);
      // int16 pairs (low, high) of the 16-value group sums and of the 32-value group sums.
      const auto low = [](int32_t v) { return static_cast<int16_t>(v & 0xFFFF); };
      const auto high = [](int32_t v) { return static_cast<int16_t>(static_cast<uint32_t>(v) >> 16); };
      for (size_t g = 0; g < 8; ++g) {
        const int32_t pair = q8k.pairs16[(8 * b + g) * kPanelTokens + lane];
        EXPECT_EQ(low(pair), real ? blocks[b].bsums[2 * g] : 0);
        EXPECT_EQ(high(pair), real ? blocks[b].bsums[2 * g + 1] : 0);
      }
      for (size_t g = 0; g < 4; ++g) {
        const int32_t pair = q8k.pairs32[(4 * b + g) * kPanelTokens + lane];
        const int16_t* bs = blocks[b].bsums + 4 * g;
        EXPECT_EQ(low(pair), real ? bs[0] + bs[1] : 0);
        EXPECT_EQ(high(pair), real ? bs[2] + bs[3] : 0);
      }
    }
  }
}

// As threads quantize: disjoint token ranges, in any order, give the bytes of one pass; a smaller batch
// after a larger one (buffers reused) is quantized afresh, padding included.
TEST(QuantizedActivationsTest, TokenRangesAndReuseGiveTheSameBytes) {
  const size_t n_cols = 256;
  const auto x = random_values(40 * n_cols, 12);
  const GgmlType types[] = {GgmlType::Q5_0, GgmlType::Q6_K};
  QuantizedActivations one, split;
  ASSERT_TRUE(one.quantize_all(x.data(), 37, n_cols, types).ok());
  ASSERT_TRUE(split.prepare(x.data(), 37, n_cols, types).ok());
  split.quantize(32, 37);
  split.quantize(0, 16);
  split.quantize(16, 32);
  for (size_t p = 0; p < one.n_panels(); ++p) {
    EXPECT_EQ(std::memcmp(one.q8_panel(p).codes, split.q8_panel(p).codes, kPanelTokens * n_cols), 0);
    EXPECT_EQ(std::memcmp(one.q8k_panel(p).codes, split.q8k_panel(p).codes, kPanelTokens * n_cols), 0);
  }
  EXPECT_EQ(std::memcmp(one.q8_codes(0), split.q8_codes(0), 37 * n_cols), 0);

  QuantizedActivations reused;
  ASSERT_TRUE(reused.quantize_all(x.data(), 40, n_cols, types).ok());
  ASSERT_TRUE(reused.quantize_all(x.data(), 37, n_cols, types).ok());
  for (size_t p = 0; p < one.n_panels(); ++p) {
    EXPECT_EQ(std::memcmp(one.q8_panel(p).codes, reused.q8_panel(p).codes, kPanelTokens * n_cols), 0);
    EXPECT_EQ(std::memcmp(one.q8k_panel(p).pairs16, reused.q8k_panel(p).pairs16, kPanelTokens * n_cols / 32 * 4), 0);
    EXPECT_EQ(std::memcmp(one.q8_panel(p).isums, reused.q8_panel(p).isums, kPanelTokens * n_cols / 32 * 4), 0);
  }
}

TEST(QuantizedActivationsTest, FewTokensHaveNoPanels) {
  const std::vector<float> x(kMinPanelTokens * 256, 0.5f);
  QuantizedActivations xq;
  const GgmlType types[] = {GgmlType::Q4_K};
  ASSERT_TRUE(xq.quantize_all(x.data(), kMinPanelTokens - 1, 256, types).ok());
  EXPECT_FALSE(xq.has_panels());
  EXPECT_EQ(xq.q8k_row(kMinPanelTokens - 2)->d, 0.5f / 127.0f);
  ASSERT_TRUE(xq.quantize_all(x.data(), kMinPanelTokens, 256, types).ok());
  EXPECT_TRUE(xq.has_panels());
}

}  // namespace
}  // namespace infertune
