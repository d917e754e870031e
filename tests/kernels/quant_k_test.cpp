// K-quant reference codecs (q2_K .. q6_K, q8_K) against ggml's own encodings in the shared fixtures, plus
// property tests on inputs the fixtures do not cover.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <ostream>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "kernels/quant.h"
#include "kernels/quant/blocks_k.h"
#include "test_support.h"

namespace infertune {
namespace {

constexpr size_t kRows = 8;
constexpr size_t kRowValues = 1024;

struct FixtureType {
  GgmlType type;
  const char* name;
  double reference_rel_rmse;  // fixtures/README.md
};

const FixtureType kFixtureTypes[] = {
    {GgmlType::Q2_K, "q2_K", 0.29385}, {GgmlType::Q3_K, "q3_K", 0.15389}, {GgmlType::Q4_K, "q4_K", 0.06997},
    {GgmlType::Q5_K, "q5_K", 0.03658}, {GgmlType::Q6_K, "q6_K", 0.01836},
};

std::string type_param_name(const testing::TestParamInfo<FixtureType>& info) { return info.param.name; }
void PrintTo(const FixtureType& t, std::ostream* os) { *os << t.name; }

size_t row_bytes(GgmlType type, size_t n) { return static_cast<size_t>(*ggml_row_bytes(type, n)); }

std::vector<std::byte> encode(GgmlType type, std::span<const float> x) {
  std::vector<std::byte> out(row_bytes(type, x.size()));
  const Status s = quantize_row(type, x, out);
  EXPECT_TRUE(s.ok()) << s.error().message;
  return out;
}

std::vector<float> decode(GgmlType type, std::span<const std::byte> q, size_t n) {
  std::vector<float> out(n);
  const Status s = dequantize_row(type, q, out);
  EXPECT_TRUE(s.ok()) << s.error().message;
  return out;
}

double rel_rmse(std::span<const float> x, std::span<const float> y) {
  double err = 0, ref = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    err += (static_cast<double>(x[i]) - y[i]) * (static_cast<double>(x[i]) - y[i]);
    ref += static_cast<double>(x[i]) * x[i];
  }
  return std::sqrt(err / ref);
}

class KQuantFixture : public testing::TestWithParam<FixtureType> {
 protected:
  std::vector<float> input_ = test::read_f32_file(test::fixture_path("quant/input.f32"));
  std::vector<std::byte> quant_ =
      test::read_file_bytes(test::fixture_path(std::string("quant/") + GetParam().name + ".quant"));
  std::vector<float> dequant_ =
      test::read_f32_file(test::fixture_path(std::string("quant/") + GetParam().name + ".dequant.f32"));
};

TEST_P(KQuantFixture, FixtureHasExpectedShape) {
  ASSERT_EQ(input_.size(), kRows * kRowValues);
  ASSERT_EQ(dequant_.size(), kRows * kRowValues);
  ASSERT_EQ(quant_.size(), kRows * row_bytes(GetParam().type, kRowValues));
}

// Decoding is exact arithmetic: every float must have ggml's bit pattern.
TEST_P(KQuantFixture, DecodeMatchesGgmlBitForBit) {
  const GgmlType type = GetParam().type;
  const size_t rb = row_bytes(type, kRowValues);
  ASSERT_EQ(quant_.size(), kRows * rb);
  for (size_t r = 0; r < kRows; ++r) {
    const auto y = decode(type, std::span(quant_).subspan(r * rb, rb), kRowValues);
    for (size_t i = 0; i < kRowValues; ++i) {
      const float want = dequant_[r * kRowValues + i];
      ASSERT_EQ(std::bit_cast<uint32_t>(y[i]), std::bit_cast<uint32_t>(want))
          << "row " << r << " value " << i << ": " << y[i] << " vs " << want;
    }
  }
}

TEST_P(KQuantFixture, EncodeErrorNoWorseThanGgml) {
  const GgmlType type = GetParam().type;
  std::vector<float> y;
  for (size_t r = 0; r < kRows; ++r) {
    const auto x = std::span<const float>(input_).subspan(r * kRowValues, kRowValues);
    const auto row = decode(type, encode(type, x), kRowValues);
    y.insert(y.end(), row.begin(), row.end());
  }
  EXPECT_LE(rel_rmse(input_, y), GetParam().reference_rel_rmse * 1.001);
}

// Our encoder follows ggml's reference quantizer operation for operation, so the bytes must be ggml's.
TEST_P(KQuantFixture, EncodeMatchesGgmlBytes) {
  const GgmlType type = GetParam().type;
  const size_t rb = row_bytes(type, kRowValues);
  const size_t block_bytes = ggml_type_traits(type).block_bytes;
  ASSERT_EQ(quant_.size(), kRows * rb);
  for (size_t r = 0; r < kRows; ++r) {
    const auto q = encode(type, std::span<const float>(input_).subspan(r * kRowValues, kRowValues));
    for (size_t i = 0; i < rb; ++i) {
      ASSERT_EQ(q[i], quant_[r * rb + i]) << "row " << r << " block " << i / block_bytes << " byte " << i % block_bytes;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(KQuants, KQuantFixture, testing::ValuesIn(kFixtureTypes), type_param_name);

// ---- Edge cases: every K type, inputs with zeros, constants, extreme magnitudes, outliers. ----

const GgmlType kAllKTypes[] = {GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::Q4_K,
                               GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::Q8_K};

std::string k_type_name(const testing::TestParamInfo<GgmlType>& info) {
  return std::string(ggml_type_name(info.param));
}

std::vector<float> normal_values(size_t n, float sigma, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.f, sigma);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// Rough error budget per type for well-behaved data (relative RMSE), a few times the fixture figures.
double loose_bound(GgmlType type) {
  switch (type) {
    case GgmlType::Q2_K:
      return 0.5;
    case GgmlType::Q3_K:
      return 0.3;
    case GgmlType::Q4_K:
      return 0.15;
    case GgmlType::Q5_K:
      return 0.08;
    case GgmlType::Q6_K:
      return 0.04;
    default:
      return 0.02;  // q8_K
  }
}

class KQuantEdge : public testing::TestWithParam<GgmlType> {
 protected:
  // Encodes and decodes x; every decoded value must be finite.
  std::vector<float> round_trip(const std::vector<float>& x) {
    const auto y = decode(GetParam(), encode(GetParam(), x), x.size());
    for (size_t i = 0; i < y.size(); ++i) {
      EXPECT_TRUE(std::isfinite(y[i])) << "value " << i << " of " << x[i] << " decoded to " << y[i];
      if (!std::isfinite(y[i])) break;
    }
    return y;
  }
};

TEST_P(KQuantEdge, AllZeroDecodesToExactZero) {
  const std::vector<float> x(512, 0.f);
  for (float v : round_trip(x)) ASSERT_EQ(v, 0.f);
}

TEST_P(KQuantEdge, ConstantBlocksStayClose) {
  for (float c : {1.f, -1.f, 0.37f, -250.f, 3e-3f}) {
    const std::vector<float> x(256, c);
    const auto y = round_trip(x);
    // A constant is reproduced up to the rounding of the half-precision scales (q2_K/q3_K: coarse sub-block
    // scales on top); for small constants the super-block scale is a subnormal half with fewer bits.
    const bool coarse = GetParam() == GgmlType::Q2_K || GetParam() == GgmlType::Q3_K;
    const double tol = coarse ? 0.1 : std::fabs(c) < 0.01f ? 0.05 : 0.02;
    for (size_t i = 0; i < x.size(); ++i) ASSERT_NEAR(y[i], c, std::fabs(c) * tol) << "constant " << c << " at " << i;
  }
}

TEST_P(KQuantEdge, TinyValues) {
  for (float sigma : {1e-6f, 1e-10f, 1e-20f, 1e-38f, 1e-42f}) {
    const auto x = normal_values(512, sigma, 7);
    const auto y = round_trip(x);
    // Below the half range the block scales flush to zero; the decoded values may not exceed the inputs.
    double max_x = 0;
    for (float v : x) max_x = std::max(max_x, static_cast<double>(std::fabs(v)));
    for (size_t i = 0; i < y.size(); ++i) ASSERT_LE(std::fabs(y[i]), 2 * max_x) << "sigma " << sigma << " at " << i;
  }
}

TEST_P(KQuantEdge, LargeValuesWithinHalfRange) {
  const auto x = normal_values(1024, 1e4f, 11);
  EXPECT_LE(rel_rmse(x, round_trip(x)), loose_bound(GetParam()));
}

TEST_P(KQuantEdge, HugeValuesStayFinite) {
  for (float sigma : {1e9f, 1e20f, 1e30f, std::numeric_limits<float>::max() / 8}) {
    auto x = normal_values(512, 1.f, 13);
    for (float& v : x) v *= sigma;  // scaled after sampling: the distribution cannot overflow
    round_trip(x);
  }
}

TEST_P(KQuantEdge, SingleOutlier) {
  auto x = normal_values(256, 1.f, 17);
  x[77] = 500.f;
  const auto y = round_trip(x);
  // The outlier itself must survive to within its sub-block's step.
  EXPECT_NEAR(y[77], 500.f, 500.f * 0.15f);
  for (size_t i = 0; i < y.size(); ++i) ASSERT_LE(std::fabs(y[i]), 600.f);
}

TEST_P(KQuantEdge, FirstValuesZero) {
  auto x = normal_values(1024, 1.f, 19);
  for (size_t i = 0; i < 300; ++i) x[i] = 0.f;
  const auto y = round_trip(x);
  // The first super-block is all zero, so it decodes to exact zeros; the rest is ordinary data.
  for (size_t i = 0; i < 256; ++i) ASSERT_EQ(y[i], 0.f) << i;
  EXPECT_LE(rel_rmse(x, y), loose_bound(GetParam()));
}

TEST_P(KQuantEdge, NormalDataWithinLooseBound) {
  const auto x = normal_values(4096, 1.f, 23);
  EXPECT_LE(rel_rmse(x, round_trip(x)), loose_bound(GetParam()));
}

TEST_P(KQuantEdge, NonFiniteValuesStayInTheirBlock) {
  // NaN and inf are not representable; they may spoil their own block, but never a neighbour (and must
  // not crash or trip the sanitizers).
  const auto clean = normal_values(256, 1.f, 37);
  const auto clean_decoded = decode(GetParam(), encode(GetParam(), clean), clean.size());
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                    -std::numeric_limits<float>::infinity()}) {
    auto x = normal_values(256, 1.f, 41);
    x[10] = bad;
    x.insert(x.end(), clean.begin(), clean.end());
    const auto y = decode(GetParam(), encode(GetParam(), x), x.size());
    for (size_t i = 0; i < 256; ++i) ASSERT_EQ(y[256 + i], clean_decoded[i]) << bad << " at " << i;
  }
}

TEST_P(KQuantEdge, MisalignedBuffersWork) {
  // Blocks inside a GGUF row need not be aligned; the codecs must not assume it.
  const auto x = normal_values(512, 1.f, 29);
  const auto aligned = encode(GetParam(), x);
  std::vector<std::byte> storage(aligned.size() + 1);
  const std::span<std::byte> shifted(storage.data() + 1, aligned.size());
  ASSERT_TRUE(quantize_row(GetParam(), x, shifted).ok());
  EXPECT_EQ(std::memcmp(shifted.data(), aligned.data(), aligned.size()), 0);
  std::vector<float> y(x.size());
  ASSERT_TRUE(dequantize_row(GetParam(), shifted, y).ok());
  EXPECT_EQ(y, decode(GetParam(), aligned, x.size()));
}

INSTANTIATE_TEST_SUITE_P(KQuants, KQuantEdge, testing::ValuesIn(kAllKTypes), k_type_name);

// ---- q8_K (no fixture): round-trip bound and group sums. ----

TEST(Q8K, RoundTripWithinHalfStepAndBsumsAreGroupSums) {
  auto x = normal_values(1024, 2.f, 31);
  // The extreme value of a block maps to code -127, whatever its sign: d = extreme / -127.
  x[300] = -9.f;
  x[600] = 9.f;
  const auto q = encode(GgmlType::Q8_K, x);
  const auto y = decode(GgmlType::Q8_K, q, x.size());
  for (size_t b = 0; b < x.size() / 256; ++b) {
    const auto block = kquant::load_block<kquant::BlockQ8K>(q.data(), static_cast<int64_t>(b));
    float amax = 0;
    for (size_t i = 0; i < 256; ++i) amax = std::max(amax, std::fabs(x[256 * b + i]));
    EXPECT_FLOAT_EQ(std::fabs(block.d), amax / 127) << "block " << b;
    for (size_t i = 0; i < 256; ++i) {
      ASSERT_LE(std::fabs(x[256 * b + i] - y[256 * b + i]), std::fabs(block.d) * 0.5001f) << b << "/" << i;
    }
    for (int g = 0; g < 16; ++g) {
      int sum = 0;
      for (int i = 0; i < 16; ++i) sum += block.qs[16 * g + i];
      EXPECT_EQ(block.bsums[g], sum) << "block " << b << " group " << g;
    }
  }
  const auto block1 = kquant::load_block<kquant::BlockQ8K>(q.data(), 1);
  EXPECT_EQ(block1.qs[300 - 256], -127);
  EXPECT_GT(block1.d, 0.f);
  const auto block2 = kquant::load_block<kquant::BlockQ8K>(q.data(), 2);
  EXPECT_EQ(block2.qs[600 - 512], -127);
  EXPECT_LT(block2.d, 0.f);
}

TEST(Q8K, ZeroBlockHasZeroSums) {
  const std::vector<float> x(256, 0.f);
  const auto block = kquant::load_block<kquant::BlockQ8K>(encode(GgmlType::Q8_K, x).data(), 0);
  EXPECT_EQ(block.d, 0.f);
  for (int g = 0; g < 16; ++g) EXPECT_EQ(block.bsums[g], 0);
}

}  // namespace
}  // namespace infertune
