// The integer form of the pieces (kernels/cuda/block_decode_int8.h), run on the host: for every quantized
// type, scale[h] * q[j] + offset[h] is the value the reference dequantize_row gives, exactly (a zero may
// come out +0 where the reference has -0: adding the offset 0 drops the sign, which no sum sees); the plain
// float types have no integer form. The device compiles the same code (linear_int8.cu), so these tests pin
// the int8 path's decoding in CI without a GPU.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "kernels/cuda/block_decode_int8.h"
#include "kernels/ggml_type.h"
#include "kernels/quant.h"

namespace infertune {
namespace {

constexpr size_t kRowValues = 1024;  // 4 super-blocks, 32 pieces

uint32_t id(GgmlType type) { return static_cast<uint32_t>(type); }

// A product then a sum, each rounded on its own (no fused multiply-add may join them).
float affine(float scale, int q, float offset) {
  volatile float product = scale * static_cast<float>(q);
  return product + offset;
}

class IntPieceForm : public ::testing::TestWithParam<GgmlType> {};

TEST_P(IntPieceForm, GivesTheReferenceValuesBitForBit) {
  const GgmlType type = GetParam();
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (int round = 0; round < 4; ++round) {
    std::vector<float> x(kRowValues);
    // Rows of both signs and of a mean far from zero (the formats with a minimum then use it).
    for (float& v : x) v = normal(rng) * (0.25f + round) + (round % 2 == 0 ? 0.0f : 3.0f);
    std::vector<std::byte> row(*ggml_row_bytes(type, kRowValues));
    ASSERT_TRUE(quantize_row(type, x, row).ok());
    std::vector<float> reference(kRowValues);
    ASSERT_TRUE(dequantize_row(type, row, reference).ok());
    const auto* data = reinterpret_cast<const uint8_t*>(row.data());
    for (int64_t piece = 0; piece < static_cast<int64_t>(kRowValues / 32); ++piece) {
      cuda::IntPiece form{};
      ASSERT_TRUE(cuda::decode_piece_int8_any(id(type), data, piece, form));
      for (int j = 0; j < 32; ++j) {
        const float got = affine(form.scale[j / 16], form.q[j], form.offset[j / 16]);
        const float want = reference[static_cast<size_t>(piece) * 32 + j];
        ASSERT_EQ(got, want) << ggml_type_name(type) << " piece " << piece << " value " << j << ": " << got << " vs "
                             << want << " (q " << int(form.q[j]) << ", scale " << form.scale[j / 16] << ", offset "
                             << form.offset[j / 16] << ")";
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryQuantizedType, IntPieceForm,
                         ::testing::Values(GgmlType::Q8_0, GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0,
                                           GgmlType::Q5_1, GgmlType::IQ4_NL, GgmlType::IQ4_XS, GgmlType::Q2_K,
                                           GgmlType::Q3_K, GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K,
                                           GgmlType::MXFP4),
                         [](const auto& info) { return std::string(ggml_type_name(info.param)); });

TEST(IntPieceForm, FloatTypesHaveNone) {
  const std::vector<uint8_t> zeros(256);
  for (GgmlType type : {GgmlType::F32, GgmlType::F16, GgmlType::BF16}) {
    cuda::IntPiece form{};
    EXPECT_FALSE(cuda::decode_piece_int8_any(id(type), zeros.data(), 0, form)) << ggml_type_name(type);
  }
  cuda::IntPiece form{};
  EXPECT_FALSE(cuda::decode_piece_int8_any(9999, zeros.data(), 0, form));
}

}  // namespace
}  // namespace infertune
