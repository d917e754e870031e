// Properties of every basic (non-K) codec on inputs the fixtures do not cover: all zeros, constants, tiny and
// huge magnitudes, one outlier, values beyond the half range, NaN / inf in a neighbouring block. The error
// of each value is bounded by a fraction of the largest magnitude in its block, derived per format below;
// nothing decodes to NaN.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "kernels/ggml_type.h"
#include "kernels/quant.h"
#include "quant_fixture_basic.h"

namespace infertune {
namespace {

using test::quant_basic::encode_rows;
using test::quant_basic::round_trip;

struct PropertyCase {
  GgmlType type;
  // |decoded - x| <= relative * (largest |x| in x's block) + absolute. Block = the type's block (one value
  // for the float types). The relative bounds are the format's worst case plus f16 rounding of its scales:
  //   q4_0: values of the sign opposite to the extreme one clamp at code +7: error d = A / 8.
  //   q5_0: likewise A / 16.   q4_1 / q5_1: half a step of (max - min) / 15 or / 31 <= A / 15, A / 31.
  //   q8_0 / q8_1: half a step of A / 127.
  //   iq4_nl: the x^2-weighted fit favours the large values and may settle on d ~ A / 134, which leaves a
  //   value +A of the sign opposite to the extreme one at 113 d (0.16 A); 0.2 A leaves room for the
  //   least-squares refinement (0.144 A is the worst seen over 5e7 normal and uniform values).
  //   iq4_xs: as iq4_nl plus the 6-bit sub-block scales (half a step of max_scale / 32), measured against
  //   the whole 256-value super-block (worst seen 0.150 A).
  //   mxfp4: the power-of-two scale d puts A in [8 d, 16 d); the codebook's widest gap (8 d to 12 d) leaves
  //   2 d <= A / 4, and values above 12 d clip there, at most 16 d - 12 d < A / 4 away.
  double relative;
  // f16 rounding in the subnormal range, where scales are only 2^-24 apart, times the largest code. For
  // iq4_xs the super-block scale is max_scale / 32, so it underflows 32 times sooner: its blocks flush to
  // zero below A ~ 1e-4 (in ggml too). mxfp4's scale is exact down to A ~ 2^-125.
  double absolute;
};

constexpr double kHalfUlp = 0x1p-11;
constexpr PropertyCase kPropertyCases[] = {
    {GgmlType::F32, 0.0, 0.0},
    {GgmlType::F16, kHalfUlp, 0x1p-25},
    {GgmlType::BF16, 0x1p-8, 0.0},
    {GgmlType::Q4_0, 1.0 / 8 + 10 * kHalfUlp, 16 * 0x1p-25},
    {GgmlType::Q4_1, 1.0 / 15 + 20 * kHalfUlp, 32 * 0x1p-25},
    {GgmlType::Q5_0, 1.0 / 16 + 20 * kHalfUlp, 32 * 0x1p-25},
    {GgmlType::Q5_1, 1.0 / 31 + 40 * kHalfUlp, 64 * 0x1p-25},
    {GgmlType::Q8_0, 1.0 / 254 + 2 * kHalfUlp, 128 * 0x1p-25},
    {GgmlType::Q8_1, 1.0 / 254 + 2 * kHalfUlp, 128 * 0x1p-25},
    {GgmlType::IQ4_NL, 0.2, 128 * 0x1p-25},
    {GgmlType::IQ4_XS, 0.22, 32 * 128 * 0x1p-25},
    {GgmlType::MXFP4, 0.25, 0.0},
};

constexpr int64_t kLength = 512;  // two IQ4_XS super-blocks, sixteen 32-value blocks

std::vector<float> generate(const std::function<float(int64_t, std::mt19937&)>& value) {
  std::mt19937 rng(1234);
  std::vector<float> x(kLength);
  for (int64_t i = 0; i < kLength; ++i) x[i] = value(i, rng);
  return x;
}

float normal(std::mt19937& rng) { return std::normal_distribution<float>(0.0f, 1.0f)(rng); }

class BasicPropertyTest : public ::testing::TestWithParam<PropertyCase> {
 protected:
  GgmlType type() const { return GetParam().type; }
  int64_t block() const { return ggml_type_traits(type()).block_elements; }

  // Round trip of x as one row: decoded values are never NaN and stay within the bound.
  std::vector<float> check_round_trip(const std::vector<float>& x, const char* what) {
    const auto y = round_trip(type(), x, kLength);
    EXPECT_EQ(y.size(), x.size()) << what;
    if (y.size() != x.size()) return y;
    int failures = 0;
    for (int64_t b = 0; b < kLength / block(); ++b) {
      double amax = 0.0;
      for (int64_t j = 0; j < block(); ++j) amax = std::max(amax, std::fabs(double(x[b * block() + j])));
      const double bound = GetParam().relative * amax + GetParam().absolute;
      for (int64_t j = b * block(); j < (b + 1) * block() && failures < 5; ++j) {
        if (std::isnan(y[j]) || !(std::fabs(double(y[j]) - x[j]) <= bound)) {
          ++failures;
          ADD_FAILURE() << ggml_type_name(type()) << " " << what << ": value " << j << " = " << x[j] << " decodes to "
                        << y[j] << ", bound " << bound << " (block max " << amax << ")";
        }
      }
    }
    return y;
  }
};

TEST_P(BasicPropertyTest, ZerosDecodeToZeros) {
  const auto y = check_round_trip(std::vector<float>(kLength, 0.0f), "zeros");
  for (float v : y) ASSERT_EQ(v, 0.0f);
}

TEST_P(BasicPropertyTest, Constants) {
  for (float c : {0.37f, -5.0f, 1.0f}) check_round_trip(std::vector<float>(kLength, c), "constant");
}

TEST_P(BasicPropertyTest, NormalValues) {
  check_round_trip(generate([](int64_t, std::mt19937& rng) { return normal(rng); }), "normal");
}

TEST_P(BasicPropertyTest, AllPositive) {
  check_round_trip(generate([](int64_t, std::mt19937& rng) { return 2.0f + std::fabs(normal(rng)); }), "positive");
}

TEST_P(BasicPropertyTest, TinyValues) {
  check_round_trip(generate([](int64_t, std::mt19937& rng) { return 1e-3f * normal(rng); }), "tiny");
  check_round_trip(generate([](int64_t, std::mt19937& rng) { return 1e-5f * normal(rng); }), "tinier");
}

TEST_P(BasicPropertyTest, HugeValuesWithinHalfRange) {
  check_round_trip(generate([](int64_t i, std::mt19937& rng) {
                     return i % 50 == 7 ? 6.0e4f : std::uniform_real_distribution<float>(-6.0e4f, 6.0e4f)(rng);
                   }),
                   "huge");
}

TEST_P(BasicPropertyTest, SingleOutlier) {
  check_round_trip(generate([](int64_t i, std::mt19937& rng) { return i == 300 ? 250.0f : normal(rng); }), "outlier");
  check_round_trip(generate([](int64_t i, std::mt19937& rng) { return i == 77 ? -1000.0f : 0.01f * normal(rng); }),
                   "negative outlier");
}

TEST_P(BasicPropertyTest, AlternatingSigns) {
  check_round_trip(generate([](int64_t i, std::mt19937&) { return i % 2 ? 3.0f : -3.0f; }), "alternating");
}

// Magnitudes no f16 scale can carry (ggml would store inf scales and decode inf / NaN): the codecs stay
// finite (saturated scales), f16 gives inf, never NaN.
TEST_P(BasicPropertyTest, BeyondHalfRangeNeverDecodesToNaN) {
  const auto x = generate([](int64_t, std::mt19937& rng) { return 1e8f * normal(rng); });
  const auto y = round_trip(type(), x, kLength);
  ASSERT_EQ(y.size(), x.size());
  for (int64_t i = 0; i < kLength; ++i) {
    ASSERT_FALSE(std::isnan(y[i])) << ggml_type_name(type()) << " value " << i;
    if (type() != GgmlType::F16) {
      ASSERT_TRUE(std::isfinite(y[i])) << ggml_type_name(type()) << " value " << i;
    }
  }
}

// Values below what any scale resolves (down to f32 subnormals) decode to something no larger, not NaN.
TEST_P(BasicPropertyTest, VanishingValuesStaySmall) {
  for (float scale : {1e-12f, 1e-30f, 1e-40f}) {
    const auto x = generate([scale](int64_t, std::mt19937& rng) { return scale * normal(rng); });
    const auto y = round_trip(type(), x, kLength);
    ASSERT_EQ(y.size(), x.size());
    const float amax =
        std::fabs(*std::max_element(x.begin(), x.end(), [](float a, float b) { return std::fabs(a) < std::fabs(b); }));
    for (int64_t i = 0; i < kLength; ++i) {
      ASSERT_LE(std::fabs(y[i]), 1.01f * amax + 1e-30f) << ggml_type_name(type()) << " scale " << scale << " #" << i;
    }
  }
}

// NaN and inf in one block neither crash the encoder nor leak into the other blocks: the rest of the row
// encodes exactly as it does on its own.
TEST_P(BasicPropertyTest, NonFiniteValuesStayInTheirBlock) {
  auto x = generate([](int64_t, std::mt19937& rng) { return normal(rng); });
  const int64_t span = std::max<int64_t>(block(), 256);  // the first super-block (or 256 plain values)
  const auto clean = encode_rows(type(), std::vector<float>(x.begin() + span, x.end()), kLength - span);
  x[3] = NAN;
  x[5] = INFINITY;
  x[6] = -INFINITY;
  const auto dirty = encode_rows(type(), x, kLength);
  const size_t offset = *ggml_row_bytes(type(), span);
  ASSERT_EQ(dirty.size(), offset + clean.size());
  EXPECT_EQ(std::memcmp(dirty.data() + offset, clean.data(), clean.size()), 0) << ggml_type_name(type());
}

INSTANTIATE_TEST_SUITE_P(Types, BasicPropertyTest, ::testing::ValuesIn(kPropertyCases),
                         [](const auto& info) { return std::string(ggml_type_name(info.param.type)); });

}  // namespace
}  // namespace infertune
