// The basic (non-K) reference codecs against ggml's own encodings (fixtures/quant): decoding must reproduce
// ggml's floats bit for bit, encoding must reproduce ggml's bytes (and so its error). Q8_1, which has no
// fixture, is checked against the Q8_0 fixture it shares its codes with. Plus the block layouts against
// the type table and the dispatcher's errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "kernels/ggml_type.h"
#include "kernels/half.h"
#include "kernels/quant.h"
#include "kernels/quant/blocks_basic.h"
#include "kernels/quant/iq4_search.h"
#include "quant_fixture_basic.h"

namespace infertune {
namespace {

using test::quant_basic::decode_rows;
using test::quant_basic::encode_rows;
using test::quant_basic::fixture_decoded;
using test::quant_basic::fixture_encoded;
using test::quant_basic::fixture_input;
using test::quant_basic::kFixtureRowLength;
using test::quant_basic::kFixtureRows;
using test::quant_basic::relative_rmse;
using ::testing::HasSubstr;

struct FixtureCase {
  GgmlType type;
  double rmse;  // relative RMSE of ggml's encoding of input.f32 (fixtures/quant/README.md)
};

constexpr FixtureCase kFixtureCases[] = {
    {GgmlType::F16, 0.00021},  {GgmlType::BF16, 0.00161},   {GgmlType::Q4_0, 0.08541},
    {GgmlType::Q4_1, 0.07842}, {GgmlType::Q5_0, 0.04259},   {GgmlType::Q5_1, 0.03673},
    {GgmlType::Q8_0, 0.00551}, {GgmlType::IQ4_NL, 0.07564}, {GgmlType::IQ4_XS, 0.07651},
};

class BasicFixtureTest : public ::testing::TestWithParam<FixtureCase> {
 protected:
  GgmlType type() const { return GetParam().type; }
  std::string_view name() const { return ggml_type_name(type()); }
};

// Index of the first element whose bits differ, or -1.
int64_t first_bit_mismatch(const std::vector<float>& a, const std::vector<float>& b) {
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (std::bit_cast<uint32_t>(a[i]) != std::bit_cast<uint32_t>(b[i])) return static_cast<int64_t>(i);
  }
  return a.size() == b.size() ? -1 : static_cast<int64_t>(std::min(a.size(), b.size()));
}

TEST_P(BasicFixtureTest, DecodesGgmlBlocksBitForBit) {
  const auto expected = fixture_decoded(name());
  ASSERT_EQ(expected.size(), size_t(kFixtureRows * kFixtureRowLength));
  const auto decoded = decode_rows(type(), fixture_encoded(name()), kFixtureRowLength);
  const int64_t at = first_bit_mismatch(decoded, expected);
  EXPECT_EQ(at, -1) << name() << ": first difference at value " << at << " (row " << at / kFixtureRowLength << "): got "
                    << (at >= 0 && at < int64_t(decoded.size()) ? decoded[at] : NAN) << ", ggml "
                    << (at >= 0 ? expected[at] : NAN);
}

// The README's table gives 5 decimals: its values are within half a unit of the last one.
constexpr double kTableRounding = 0.5e-5;

TEST_P(BasicFixtureTest, FixtureTableMatchesGgmlDecoding) {
  // Checks relative_rmse itself (and the table the next test relies on) on independent data.
  EXPECT_NEAR(relative_rmse(fixture_input(), fixture_decoded(name())), GetParam().rmse, kTableRounding * 1.001)
      << name();
}

TEST_P(BasicFixtureTest, EncodingErrorIsNoWorseThanGgml) {
  const auto input = fixture_input();
  const auto decoded = decode_rows(type(), encode_rows(type(), input, kFixtureRowLength), kFixtureRowLength);
  ASSERT_EQ(decoded.size(), input.size());
  const double ours = relative_rmse(input, decoded);
  EXPECT_LE(ours, (GetParam().rmse + kTableRounding) * 1.001) << name() << " against the README table";
  EXPECT_LE(ours, relative_rmse(input, fixture_decoded(name())) * 1.001) << name() << " against ggml's encoding";
}

TEST_P(BasicFixtureTest, EncodesGgmlBytesExactly) {
  const auto expected = fixture_encoded(name());
  const auto encoded = encode_rows(type(), fixture_input(), kFixtureRowLength);
  ASSERT_EQ(encoded.size(), expected.size());
  const size_t block_bytes = ggml_type_traits(type()).block_bytes;
  int differing_blocks = 0;
  size_t first = 0;
  for (size_t b = 0; b < encoded.size() / block_bytes; ++b) {
    if (std::memcmp(&encoded[b * block_bytes], &expected[b * block_bytes], block_bytes) != 0) {
      if (differing_blocks++ == 0) first = b;
    }
  }
  EXPECT_EQ(differing_blocks, 0) << name() << ": " << differing_blocks << " blocks differ from ggml's, first #"
                                 << first;
}

INSTANTIATE_TEST_SUITE_P(Types, BasicFixtureTest, ::testing::ValuesIn(kFixtureCases),
                         [](const auto& info) { return std::string(ggml_type_name(info.param.type)); });

TEST(BasicCodecTest, F32RowsAreCopiedBitForBit) {
  const std::vector<float> input = {1.5f, -0.0f, std::bit_cast<float>(0x7fc12345u), INFINITY, 1e-42f};
  const auto bytes = encode_rows(GgmlType::F32, input, 1);
  ASSERT_EQ(bytes.size(), input.size() * 4);
  EXPECT_EQ(std::memcmp(bytes.data(), input.data(), bytes.size()), 0);
  EXPECT_EQ(first_bit_mismatch(decode_rows(GgmlType::F32, bytes, 1), input), -1);
}

TEST(BasicCodecTest, BlockStructsMatchTheTypeTable) {
  using namespace basic_quant;
  EXPECT_EQ(sizeof(BlockQ4_0), ggml_type_traits(GgmlType::Q4_0).block_bytes);
  EXPECT_EQ(sizeof(BlockQ4_1), ggml_type_traits(GgmlType::Q4_1).block_bytes);
  EXPECT_EQ(sizeof(BlockQ5_0), ggml_type_traits(GgmlType::Q5_0).block_bytes);
  EXPECT_EQ(sizeof(BlockQ5_1), ggml_type_traits(GgmlType::Q5_1).block_bytes);
  EXPECT_EQ(sizeof(BlockQ8_0), ggml_type_traits(GgmlType::Q8_0).block_bytes);
  EXPECT_EQ(sizeof(BlockQ8_1), ggml_type_traits(GgmlType::Q8_1).block_bytes);
  EXPECT_EQ(sizeof(BlockIq4Nl), ggml_type_traits(GgmlType::IQ4_NL).block_bytes);
  EXPECT_EQ(sizeof(BlockIq4Xs), ggml_type_traits(GgmlType::IQ4_XS).block_bytes);
  EXPECT_EQ(sizeof(BlockMxfp4), ggml_type_traits(GgmlType::MXFP4).block_bytes);
  for (GgmlType t : {GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q8_0, GgmlType::Q8_1,
                     GgmlType::IQ4_NL, GgmlType::MXFP4}) {
    EXPECT_EQ(ggml_type_traits(t).block_elements, uint32_t(kBlock)) << ggml_type_name(t);
  }
  EXPECT_EQ(ggml_type_traits(GgmlType::IQ4_XS).block_elements, uint32_t(kSuperBlock));
}

// ---- Rounding at exact ties, which random data almost never reaches but ggml's bytes depend on.

// One block whose extreme value fixes the scale at exactly 1, so the codes are the values themselves.
//   returns: [32]
std::vector<float> unit_scale_block(float extreme, std::initializer_list<float> values) {
  std::vector<float> x(basic_quant::kBlock, 0.0f);
  x[0] = extreme;
  std::copy(values.begin(), values.end(), x.begin() + 1);
  return x;
}

TEST(BasicCodecTest, Q8_0RoundsTiesAwayFromZero) {
  using namespace basic_quant;
  const auto bytes = encode_rows(GgmlType::Q8_0, unit_scale_block(127.0f, {2.5f, -2.5f, 0.5f, -0.5f, 126.5f}), kBlock);
  const auto block = load_block<BlockQ8_0>(bytes.data(), 0);
  EXPECT_EQ(block.d.bits, 0x3c00);  // 1.0
  const int8_t expected[] = {127, 3, -3, 1, -1, 127};
  for (int j = 0; j < 6; ++j) EXPECT_EQ(block.qs[j], expected[j]) << j;
}

TEST(BasicCodecTest, Q4_0RoundsTiesUpAndClampsAtSeven) {
  using namespace basic_quant;
  // d = max / -8 = 1; codes are floor(x + 8.5), so halves go up, and +7.6 clamps to code 15 (value 7).
  const auto x = unit_scale_block(-8.0f, {0.5f, -0.5f, 1.5f, -1.5f, 7.6f});
  const auto bytes = encode_rows(GgmlType::Q4_0, x, kBlock);
  EXPECT_EQ(load_block<BlockQ4_0>(bytes.data(), 0).d.bits, 0x3c00);
  const auto y = decode_rows(GgmlType::Q4_0, bytes, kBlock);
  const float expected[] = {-8.0f, 1.0f, 0.0f, 2.0f, -1.0f, 7.0f};
  for (int j = 0; j < 6; ++j) EXPECT_EQ(y[j], expected[j]) << j;
}

TEST(BasicCodecTest, Iq4NearestIndexTakesTheUpperValueOnTies) {
  using namespace basic_quant;
  // Brute force: smallest distance, the higher index on equal distances (ggml's best_index_int8).
  const auto reference = [](float v) {
    int best = 0;
    for (int i = 1; i < 16; ++i) {
      if (std::fabs(v - kIq4Values[i]) <= std::fabs(v - kIq4Values[best])) best = i;
    }
    return best;
  };
  std::vector<float> probes = {-1000.0f, -127.0f, 113.0f, 1000.0f, 0.0f};
  for (int i = 0; i < 16; ++i) {
    for (float delta : {-0.75f, -0.25f, 0.0f, 0.25f, 0.75f}) probes.push_back(kIq4Values[i] + delta);
    if (i < 15) probes.push_back((kIq4Values[i] + kIq4Values[i + 1]) / 2.0f);  // exact midpoints
  }
  for (float v : probes) EXPECT_EQ(iq4_nearest_index(v), reference(v)) << v;
}

// ---- Q8_1: no ggml fixture; its codes and d are Q8_0's, and s = d * sum(q).

TEST(BasicCodecTest, Q8_1HasQ8_0CodesAndScale) {
  using namespace basic_quant;
  const auto input = fixture_input();
  const auto q8_1 = encode_rows(GgmlType::Q8_1, input, kFixtureRowLength);
  const auto q8_0 = fixture_encoded("q8_0");
  const int64_t blocks = kFixtureRows * kFixtureRowLength / kBlock;
  ASSERT_EQ(q8_1.size(), size_t(blocks) * sizeof(BlockQ8_1));
  ASSERT_EQ(q8_0.size(), size_t(blocks) * sizeof(BlockQ8_0));
  for (int64_t b = 0; b < blocks; ++b) {
    const auto ours = load_block<BlockQ8_1>(q8_1.data(), b);
    const auto ggml = load_block<BlockQ8_0>(q8_0.data(), b);
    ASSERT_EQ(ours.d.bits, ggml.d.bits) << "block " << b;
    ASSERT_EQ(std::memcmp(ours.qs, ggml.qs, kBlock), 0) << "block " << b;
  }
  // Hence Q8_1 decodes exactly like ggml's Q8_0.
  const auto decoded = decode_rows(GgmlType::Q8_1, q8_1, kFixtureRowLength);
  EXPECT_EQ(first_bit_mismatch(decoded, fixture_decoded("q8_0")), -1);
}

TEST(BasicCodecTest, Q8_1SumIsScaleTimesCodeSum) {
  using namespace basic_quant;
  const auto input = fixture_input();
  const auto bytes = encode_rows(GgmlType::Q8_1, input, kFixtureRowLength);
  for (int64_t b = 0; b < int64_t(bytes.size() / sizeof(BlockQ8_1)); ++b) {
    const auto block = load_block<BlockQ8_1>(bytes.data(), b);
    int sum = 0;
    for (int8_t q : block.qs) sum += q;
    const double d = f16_to_f32(block.d);
    const double s = f16_to_f32(block.s);
    // s and d are each rounded to f16 once: 2^-11 relative in the normal range, 2^-25 absolute below it.
    const double tolerance = std::ldexp(std::fabs(d * sum), -10) + (std::abs(sum) + 1) * std::ldexp(1.0, -24);
    EXPECT_NEAR(s, d * sum, tolerance) << "block " << b << ", sum of codes " << sum;
  }
}

// ---- The dispatcher (kernels/quant.cpp) on bad arguments.

constexpr GgmlType kBlockTypes[] = {GgmlType::Q4_0, GgmlType::Q4_1,   GgmlType::Q5_0,   GgmlType::Q5_1, GgmlType::Q8_0,
                                    GgmlType::Q8_1, GgmlType::IQ4_NL, GgmlType::IQ4_XS, GgmlType::MXFP4};
constexpr GgmlType kAllBasicTypes[] = {GgmlType::F32,  GgmlType::F16,    GgmlType::BF16,   GgmlType::Q4_0,
                                       GgmlType::Q4_1, GgmlType::Q5_0,   GgmlType::Q5_1,   GgmlType::Q8_0,
                                       GgmlType::Q8_1, GgmlType::IQ4_NL, GgmlType::IQ4_XS, GgmlType::MXFP4};

TEST(BasicDispatchTest, EveryBasicTypeHasACodec) {
  for (GgmlType t : kAllBasicTypes) EXPECT_TRUE(has_reference_codec(t)) << ggml_type_name(t);
  EXPECT_FALSE(has_reference_codec(GgmlType::IQ2_XXS));
}

TEST(BasicDispatchTest, PartialBlockIsAnErrorNamingTheType) {
  for (GgmlType t : kBlockTypes) {
    const int64_t n = ggml_type_traits(t).block_elements + 1;
    std::vector<float> values(n, 1.0f);
    std::vector<std::byte> bytes(2 * ggml_type_traits(t).block_bytes);
    const Status q = quantize_row(t, values, bytes);
    ASSERT_FALSE(q.ok()) << ggml_type_name(t);
    EXPECT_THAT(q.error().message, HasSubstr(std::string(ggml_type_name(t))));
    const Status d = dequantize_row(t, bytes, values);
    ASSERT_FALSE(d.ok()) << ggml_type_name(t);
    EXPECT_THAT(d.error().message, HasSubstr(std::string(ggml_type_name(t))));
  }
}

TEST(BasicDispatchTest, WrongBufferSizeIsAnErrorAndWritesNothing) {
  for (GgmlType t : kAllBasicTypes) {
    const int64_t n = ggml_type_traits(t).block_elements * 2;
    const size_t row_bytes = *ggml_row_bytes(t, n);
    std::vector<float> values(n, 0.5f);
    for (size_t size : {row_bytes - 1, row_bytes + 1, size_t{0}}) {
      std::vector<std::byte> bytes(size, std::byte{0xAB});
      const Status q = quantize_row(t, values, bytes);
      ASSERT_FALSE(q.ok()) << ggml_type_name(t) << " " << size;
      EXPECT_THAT(q.error().message, HasSubstr(std::string(ggml_type_name(t))));
      for (std::byte b : bytes) ASSERT_EQ(b, std::byte{0xAB});
      std::vector<float> out(n, 7.0f);
      const Status d = dequantize_row(t, bytes, out);
      ASSERT_FALSE(d.ok()) << ggml_type_name(t) << " " << size;
      for (float v : out) ASSERT_EQ(v, 7.0f);
    }
  }
}

TEST(BasicDispatchTest, EmptyRowIsFine) {
  for (GgmlType t : kAllBasicTypes) {
    EXPECT_TRUE(quantize_row(t, std::span<const float>(), std::span<std::byte>()).ok()) << ggml_type_name(t);
    EXPECT_TRUE(dequantize_row(t, std::span<const std::byte>(), std::span<float>()).ok()) << ggml_type_name(t);
  }
}

TEST(BasicDispatchTest, TypeWithoutCodecIsAnError) {
  std::vector<float> values(256);
  std::vector<std::byte> bytes(*ggml_row_bytes(GgmlType::IQ2_XXS, 256));
  const Status q = quantize_row(GgmlType::IQ2_XXS, values, bytes);
  ASSERT_FALSE(q.ok());
  EXPECT_THAT(q.error().message, HasSubstr("iq2_xxs"));
  EXPECT_FALSE(dequantize_row(GgmlType::IQ2_XXS, bytes, values).ok());
}

}  // namespace
}  // namespace infertune
