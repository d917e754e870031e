// The piece decoders of kernels/cuda/block_decode.h, run on the host, against the reference dequantize_row
// bit for bit. The device compiles the same code (kernels/cuda/block_decode_instantiate.cu), so these tests
// pin its arithmetic in CI without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <ostream>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "kernels/cuda/block_decode.h"
#include "kernels/ggml_type.h"
#include "kernels/quant.h"

namespace infertune {
namespace {

using cuda::BlockType;

// The ids must stay ggml's, as GgmlType has them.
static_assert(static_cast<uint32_t>(BlockType::BF16) == static_cast<uint32_t>(GgmlType::BF16));
static_assert(static_cast<uint32_t>(BlockType::IQ4_XS) == static_cast<uint32_t>(GgmlType::IQ4_XS));
static_assert(static_cast<uint32_t>(BlockType::Q2_K) == static_cast<uint32_t>(GgmlType::Q2_K));
static_assert(static_cast<uint32_t>(BlockType::MXFP4) == static_cast<uint32_t>(GgmlType::MXFP4));

const GgmlType kDecodedTypes[] = {
    GgmlType::F32,  GgmlType::F16,  GgmlType::BF16,   GgmlType::Q8_0,   GgmlType::Q4_0, GgmlType::Q4_1,
    GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::IQ4_NL, GgmlType::IQ4_XS, GgmlType::Q2_K, GgmlType::Q3_K,
    GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K,   GgmlType::MXFP4,
};

constexpr size_t kRowValues = 1024;  // 4 super-blocks, 32 pieces

uint32_t id(GgmlType type) { return static_cast<uint32_t>(type); }

std::vector<std::byte> encode(GgmlType type, std::span<const float> x) {
  std::vector<std::byte> out(*ggml_row_bytes(type, x.size()));
  const Status s = quantize_row(type, x, out);
  EXPECT_TRUE(s.ok()) << s.error().message;
  return out;
}

std::vector<float> reference_decode(GgmlType type, std::span<const std::byte> row, size_t n) {
  std::vector<float> out(n);
  const Status s = dequantize_row(type, row, out);
  EXPECT_TRUE(s.ok()) << s.error().message;
  return out;
}

std::vector<float> decode_by_pieces(GgmlType type, std::span<const std::byte> row, size_t n) {
  std::vector<float> out(n, std::numeric_limits<float>::quiet_NaN());
  const auto* bytes = reinterpret_cast<const uint8_t*>(row.data());
  for (size_t piece = 0; piece < n / cuda::kPieceValues; ++piece) {
    EXPECT_TRUE(cuda::decode_piece_any(id(type), bytes, static_cast<int64_t>(piece), &out[piece * 32]));
  }
  return out;
}

uint32_t bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

// Every float's bit pattern equal; with any_nan_equal, two NaNs also count as equal (the device makes every
// NaN that arithmetic produces canonical, so NaN payloads from arithmetic are not part of the contract).
void expect_same_bits(GgmlType type, std::span<const std::byte> row, size_t n, bool any_nan_equal) {
  const std::vector<float> want = reference_decode(type, row, n);
  const std::vector<float> got = decode_by_pieces(type, row, n);
  int mismatches = 0;
  for (size_t i = 0; i < n && mismatches < 5; ++i) {
    if (any_nan_equal && std::isnan(want[i]) && std::isnan(got[i])) continue;
    if (bits(want[i]) != bits(got[i])) {
      ++mismatches;
      ADD_FAILURE() << ggml_type_name(type) << " value " << i << " (piece " << i / 32 << "): reference " << want[i]
                    << " (0x" << std::hex << bits(want[i]) << "), piece decoder " << got[i] << " (0x" << bits(got[i])
                    << std::dec << ")";
    }
  }
}

// Input rows that reach different corners of the encoders: scales from tiny to large, zeros, negatives,
// blocks of very different magnitude, and outliers that dominate their block's scale.
std::vector<std::vector<float>> input_rows() {
  std::mt19937 rng(20240611);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-6, 4);
  std::vector<std::vector<float>> rows;
  for (float scale : {1.0f, 1e-3f, 300.0f}) {
    std::vector<float> row(kRowValues);
    for (float& v : row) v = scale * normal(rng);
    rows.push_back(row);
  }
  std::vector<float> mixed(kRowValues);  // each 32-value piece at its own magnitude, some all zero
  for (size_t p = 0; p < kRowValues / 32; ++p) {
    const float scale = p % 7 == 3 ? 0.0f : std::pow(10.0f, static_cast<float>(exponent(rng)));
    for (size_t j = 0; j < 32; ++j) mixed[32 * p + j] = scale * normal(rng);
  }
  rows.push_back(mixed);
  std::vector<float> outliers(kRowValues);
  for (size_t i = 0; i < kRowValues; ++i) outliers[i] = i % 97 == 5 ? (i % 2 ? -2.5e4f : 1.8e4f) : 0.02f * normal(rng);
  rows.push_back(outliers);
  std::vector<float> sparse(kRowValues, 0.0f);  // mostly zeros: an all-zero super-block, lone values
  for (size_t i = 300; i < kRowValues; i += 37) sparse[i] = normal(rng);
  rows.push_back(sparse);
  std::vector<float> positive(kRowValues);  // one-signed rows take the min/offset paths of the encoders
  for (float& v : positive) v = 4.0f + std::fabs(normal(rng));
  rows.push_back(positive);
  return rows;
}

// The test parameter: a struct of our own, so that gtest prints the type's name.
struct DecodedType {
  GgmlType type;
};
void PrintTo(const DecodedType& t, std::ostream* os) { *os << ggml_type_name(t.type); }

std::vector<DecodedType> decoded_types() {
  std::vector<DecodedType> out;
  for (GgmlType type : kDecodedTypes) out.push_back({type});
  return out;
}

std::string type_param_name(const testing::TestParamInfo<DecodedType>& info) {
  return std::string(ggml_type_name(info.param.type));
}

class BlockDecodeTest : public testing::TestWithParam<DecodedType> {};

TEST_P(BlockDecodeTest, EncodedRowsDecodeToReferenceBits) {
  const GgmlType type = GetParam().type;
  for (const std::vector<float>& x : input_rows()) expect_same_bits(type, encode(type, x), x.size(), false);
}

// Arbitrary block bytes: scales that are huge, subnormal, inf or NaN, codes no encoder would write.
TEST_P(BlockDecodeTest, RandomBytesDecodeToReferenceBits) {
  const GgmlType type = GetParam().type;
  std::mt19937 rng(7 + id(type));
  std::uniform_int_distribution<int> byte(0, 255);
  for (int trial = 0; trial < 8; ++trial) {
    std::vector<std::byte> row(*ggml_row_bytes(type, kRowValues));
    for (std::byte& b : row) b = static_cast<std::byte>(byte(rng));
    expect_same_bits(type, row, kRowValues, true);
  }
}

INSTANTIATE_TEST_SUITE_P(AllTypes, BlockDecodeTest, testing::ValuesIn(decoded_types()), type_param_name);

// Every 16-bit pattern (normals, subnormals, zeros, infinities, NaN payloads) converts exactly as the
// reference does, NaNs included.
TEST(BlockDecodeHalves, EveryF16AndBf16PatternMatchesReference) {
  std::vector<std::byte> row(2 * 65536);
  for (uint32_t h = 0; h < 65536; ++h) {
    row[2 * h] = static_cast<std::byte>(h & 0xFF);
    row[2 * h + 1] = static_cast<std::byte>(h >> 8);
  }
  expect_same_bits(GgmlType::F16, row, 65536, false);
  expect_same_bits(GgmlType::BF16, row, 65536, false);
}

TEST(BlockDecodeShapes, RowBytesAgreeWithTypeTraits) {
  for (GgmlType type : kDecodedTypes) {
    EXPECT_TRUE(cuda::supported(id(type))) << ggml_type_name(type);
    for (uint64_t n : {256u, 1024u, 4096u, 11008u * 256u}) {
      EXPECT_EQ(cuda::row_bytes(id(type), n), *ggml_row_bytes(type, n)) << ggml_type_name(type) << " n=" << n;
    }
    const GgmlTypeTraits& traits = ggml_type_traits(type);  // a block holds whole pieces (or is one element)
    EXPECT_TRUE(traits.block_elements == 1 || traits.block_elements % cuda::kPieceValues == 0) << ggml_type_name(type);
  }
}

TEST(BlockDecodeShapes, UnsupportedTypesAreRejected) {
  for (uint32_t type_id = 0; type_id < 64; ++type_id) {
    bool decoded = false;
    for (GgmlType type : kDecodedTypes) decoded = decoded || id(type) == type_id;
    EXPECT_EQ(cuda::supported(type_id), decoded) << "type id " << type_id;
    if (decoded) continue;
    EXPECT_EQ(cuda::row_bytes(type_id, 256), 0u) << "type id " << type_id;
    const std::vector<uint8_t> row(1024, 0x55);
    float out[32] = {};
    EXPECT_FALSE(cuda::decode_piece_any(type_id, row.data(), 0, out)) << "type id " << type_id;
    for (float v : out) EXPECT_EQ(bits(v), 0u) << "output untouched for type id " << type_id;
  }
  EXPECT_FALSE(cuda::supported(id(GgmlType::Q8_K)));
  EXPECT_FALSE(cuda::supported(id(GgmlType::IQ2_XXS)));
}

}  // namespace
}  // namespace infertune
